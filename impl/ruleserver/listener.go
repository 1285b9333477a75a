package ruleserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"

	"github.com/sdods/sdods/gen/rulesapi"
)

// net/http answers requests it cannot parse (a request target with malformed percent-encoding,
// a malformed header, an oversized header block) itself, before any handler runs, with a fixed
// text/plain response written straight to the connection in one Write. errorListener's
// connections recognise those writes by their fixed header block and send the same status with
// the error body of openapi/rules.yaml instead, so that every error a client sees has one shape.
// Handler responses are never text/plain, so nothing else can match.
const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

type errorListener struct{ net.Listener }

func (l errorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &errorConn{Conn: c}, nil
}

// errorConn also carries what connTracker needs to know during a drain.
type errorConn struct {
	net.Conn
	idle     atomic.Bool   // no request is being read or answered
	requests atomic.Uint64 // requests started on the connection
}

func (c *errorConn) Write(p []byte) (int, error) {
	// The fixed header block follows the status line at once; answers of handlers are checked
	// up to the end of their status line only.
	line := bytes.IndexByte(p, '\n')
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) || line < 1 || !bytes.HasPrefix(p[line-1:], []byte(goErrorHeaders)) {
		return c.Conn.Write(p)
	}
	head, text, _ := bytes.Cut(p, []byte(goErrorHeaders))
	status, _, _ := bytes.Cut(bytes.TrimPrefix(head, []byte("HTTP/1.1 ")), []byte(" "))
	code, err := strconv.Atoi(string(status))
	if err != nil {
		return c.Conn.Write(p)
	}
	detail := ""
	if _, d, ok := bytes.Cut(text, []byte(": ")); ok {
		detail = ": " + string(d)
	}
	msg := "the request could not be parsed" + detail
	hint := "check the request line and headers"
	if code == 400 && detail == "" {
		msg = "the request target could not be parsed (for example, the path has malformed percent-encoding)"
		hint = "percent-encode the path as RFC 3986 requires: '%' followed by two hexadecimal digits"
	}
	b, _ := json.Marshal(rulesapi.Error{Error: rulesapi.ErrorBody{Code: rulesapi.ErrorCodeBADREQUEST, Message: msg, Hint: hint}})
	b = append(b, '\n')
	resp := fmt.Sprintf("%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", head, len(b), b)
	if _, err := c.Conn.Write([]byte(resp)); err != nil {
		return 0, err
	}
	return len(p), nil
}
