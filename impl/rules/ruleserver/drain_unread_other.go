//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package ruleserver

// unread cannot peek at the socket here: a sweep relies on the connection's state alone.
func (c *errorConn) unread() bool { return false }
