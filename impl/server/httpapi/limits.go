package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/sdods/sdods/impl/server/apierr"
)

// MaxJSONDepth is the deepest nesting of arrays and objects a JSON request body may have (the rule
// engine's limit). Deeper bodies are refused before the validator decodes them: decoding and
// validating a deeply nested body costs time that grows faster than its size.
const MaxJSONDepth = 64

// AnonymousMaxBody caps the body of a request without credentials (login, setup, and whatever an
// anonymous caller sends to a protected operation before it is refused).
const AnonymousMaxBody = 64 << 10

// isJSON reports whether a Content-Type names JSON or newline-delimited JSON.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/x-ndjson"
}

// checkJSONBody reads a JSON request body, scanning it as it arrives, and refuses it as soon as
// it nests deeper than max; otherwise it puts the body back for the validator and the handler.
func checkJSONBody(r *http.Request, max int) error {
	if r.Body == nil || r.Body == http.NoBody || !isJSON(r.Header.Get("Content-Type")) {
		return nil
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	sc := depthScanner{max: max}
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Body.Read(chunk)
		if n > 0 {
			if !sc.scan(chunk[:n]) {
				return apierr.New(apierr.ValidationFailed, fmt.Sprintf("the JSON body nests arrays and objects deeper than %d levels", max),
					fmt.Sprintf("body: nest arrays and objects at most %d levels deep", max))
			}
			buf.Write(chunk[:n])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return apierr.Wrap(err, apierr.PayloadTooLarge, fmt.Sprintf("the request body exceeds the limit of %d bytes", tooLarge.Limit), "send a smaller body")
			}
			return apierr.Wrap(err, apierr.BadRequest, "the request body could not be read", "send the whole body")
		}
	}
	_ = r.Body.Close()
	r.Body = io.NopCloser(&buf)
	return nil
}

// depthScanner follows the nesting of a JSON text across chunks without decoding it. Brackets in
// strings do not count; malformed JSON is left to the validator.
type depthScanner struct {
	max, depth    int
	inString, esc bool
}

// scan consumes b and reports false once the nesting exceeds max.
func (s *depthScanner) scan(b []byte) bool {
	for _, c := range b {
		if s.inString {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '[', '{':
			s.depth++
			if s.depth > s.max {
				return false
			}
		case ']', '}':
			if s.depth > 0 {
				s.depth--
			}
		}
	}
	return true
}

// escapePath returns a request path as it may be stored and logged: valid UTF-8 without control
// characters, '%' and bytes outside that percent-encoded, so that the record is unambiguous and
// PostgreSQL accepts it (it refuses NUL and invalid UTF-8 in text).
func escapePath(p string) string {
	// The usual path has nothing to escape: returned as it is, without a copy.
	clean := true
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= 0x7f || c == '%' {
			clean = false
			break
		}
	}
	if clean {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		if (r == utf8.RuneError && size == 1) || r < 0x20 || r == 0x7f || r == '%' {
			fmt.Fprintf(&b, "%%%02X", p[i])
			i++
			continue
		}
		b.WriteString(p[i : i+size])
		i += size
	}
	return b.String()
}

// clientAddress returns the client's address: the connection's peer, or, when the peer is a
// trusted proxy, the nearest address in X-Forwarded-For that is not one. Without trusted proxies
// the header is ignored, so a client cannot choose the address its login attempts are counted by.
func clientAddress(r *http.Request, trusted []netip.Prefix) string {
	peer := peerAddr(r)
	addr, err := netip.ParseAddr(peer)
	if err != nil || !isTrusted(addr, trusted) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	var all []string
	for _, h := range hops {
		all = append(all, strings.Split(h, ",")...)
	}
	for i := len(all) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(all[i]))
		if err != nil {
			// A malformed hop was written by someone we do not trust: stop at the last good one.
			return addr.Unmap().String()
		}
		addr = hop
		if !isTrusted(hop, trusted) {
			break
		}
	}
	return addr.Unmap().String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	a = a.Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR prefixes.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR prefix", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
