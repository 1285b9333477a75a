//go:build linux || darwin || freebsd || netbsd || openbsd

package ruleserver

import "syscall"

// unread reports whether the kernel holds bytes the server has not yet read on the connection:
// a request that has arrived and that the connection's goroutine has not yet been scheduled to
// read. After the process has had no CPU for a while, the drain's ticker can fire before the
// network is polled, and a sweep would close as idle a connection whose request is waiting.
// The peek (MSG_PEEK, MSG_DONTWAIT) takes nothing from the socket; RawConn.Control does not wait
// for the goroutine blocked in Read.
func (c *errorConn) unread() bool {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	var b [1]byte
	_ = rc.Control(func(fd uintptr) {
		n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n > 0
}
