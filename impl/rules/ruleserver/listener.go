package ruleserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
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

type errorListener struct {
	net.Listener
	probe *acceptProbe // the drain's own connection, taken out of the queue (acceptQueued)
}

func (l errorListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.probe.took(c) {
			_ = c.Close()
			continue
		}
		return &errorConn{Conn: c}, nil
	}
}

// errorConn also carries what connTracker needs to know during a drain, and the bytes of its
// last read: net/http's plain "400 Bad Request" does not say what was wrong, so the request head
// is read again to name it.
type errorConn struct {
	net.Conn
	idle     atomic.Bool   // no request is being read or answered
	requests atomic.Uint64 // requests started on the connection
	last     []byte        // the last read (net/http's buffer: valid until its next read)
}

func (c *errorConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.last = p[:n]
	}
	return n, err
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
	e := parseRefusal(code, string(text), c.last)
	b, _ := json.Marshal(rulesapi.Error{Error: rulesapi.ErrorBody{Code: e.Code, Message: e.Message, Hint: e.Hint}})
	b = append(b, '\n')
	resp := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, statusText(code), len(b), b)
	if _, err := c.Conn.Write([]byte(resp)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func statusText(code int) string {
	switch code {
	case 400:
		return "Bad Request"
	case 431:
		return "Request Header Fields Too Large"
	case 501:
		return "Not Implemented"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Error"
}

// parseRefusal is the error body of a request net/http refused with status code and the text
// of its plain answer; read is what the connection read last, which holds the request head
// when it came in one piece.
func parseRefusal(code int, text string, read []byte) *Error {
	switch code {
	case 431:
		return &Error{Code: rulesapi.ErrorCodeHEADERSTOOLARGE, Message: "the request line and headers exceed 64 KiB",
			Hint: "send fewer or shorter headers"}
	case 501:
		return &Error{Code: rulesapi.ErrorCodeTRANSFERENCODINGUNSUPPORTED, Message: "the request's Transfer-Encoding is not supported",
			Hint: "send the body with Content-Length or Transfer-Encoding: chunked"}
	case 505:
		return &Error{Code: rulesapi.ErrorCodeHTTPVERSIONNOTSUPPORTED, Message: "the request's HTTP version is not supported",
			Hint: "send HTTP/1.1 (or HTTP/1.0)"}
	}
	if _, detail, ok := strings.Cut(text, ": "); ok { // net/http said what was wrong
		return &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: "the request could not be parsed: " + detail,
			Hint: "check the request line and headers"}
	}
	if msg, hint := headProblem(read); msg != "" {
		return &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: msg, Hint: hint}
	}
	return &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: "the request line or a header could not be parsed",
		Hint: "send a request line 'METHOD target HTTP/1.1' and headers 'Name: value' as RFC 9112 defines"}
}

// headProblem names what is wrong with a request head net/http refused without saying why
// (the checks net/http makes, in its order), or returns "" when it cannot tell: the head did not
// come in one read, or the problem is one it does not look for.
func headProblem(read []byte) (msg, hint string) {
	head, _, _ := bytes.Cut(read, []byte("\r\n\r\n"))
	lines := strings.Split(string(head), "\r\n")
	method, rest, ok1 := strings.Cut(lines[0], " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		if len(read) == 0 {
			return "", ""
		}
		return "the request line is malformed: " + quote(lines[0]), "send 'METHOD target HTTP/1.1'"
	}
	if method == "" || strings.IndexFunc(method, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) }) >= 0 {
		return "the request method is malformed: " + quote(method), "send a method such as POST or GET"
	}
	if len(proto) != 8 || !strings.HasPrefix(proto, "HTTP/") || proto[5] < '0' || proto[5] > '9' || proto[6] != '.' || proto[7] < '0' || proto[7] > '9' {
		return "the request line's HTTP version is malformed: " + quote(proto), "send 'METHOD target HTTP/1.1'"
	}
	if _, err := url.ParseRequestURI(target); err != nil {
		if strings.Contains(err.Error(), "invalid URL escape") {
			return "the request target has malformed percent-encoding: " + quote(target),
				"percent-encode the path as RFC 3986 requires: '%' followed by two hexadecimal digits"
		}
		return "the request target could not be parsed: " + quote(target), "send an absolute path such as /evaluations"
	}
	var lengths []string
	hosts := 0
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return "a header line is malformed: " + quote(l), "send headers as 'Name: value'"
		}
		if strings.EqualFold(name, "Content-Length") {
			lengths = append(lengths, strings.Trim(value, " \t"))
		}
		if strings.EqualFold(name, "Host") {
			hosts++
		}
	}
	if hosts > 1 {
		return "the request has more than one Host header", "send one Host header"
	}
	for _, v := range lengths {
		if v != lengths[0] {
			return "the request has Content-Length headers that disagree: " + quote(strings.Join(lengths, ", ")),
				"send one Content-Length"
		}
	}
	if len(lengths) > 0 {
		if _, err := strconv.ParseUint(lengths[0], 10, 63); err != nil {
			return "Content-Length " + quote(lengths[0]) + " is not a non-negative decimal number",
				"send the body's length in bytes, or Transfer-Encoding: chunked"
		}
	}
	return "", ""
}

// quote quotes s for a message, cut at 80 bytes: the rest is the client's own input.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}
