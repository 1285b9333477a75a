package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/routers"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/textclip"
)

// The server stores text in PostgreSQL, which refuses NUL in text, and it promises to give back
// what it was sent: a NUL character, invalid UTF-8 or a lone UTF-16 surrogate (which a JSON
// decoder silently turns into U+FFFD) in a member or parameter is refused here, once for every
// operation, naming the member. Test output (ingest) is the exception: it is kept, escaped, by
// the ingest package.

// testOutputOps are the operations whose body is test output, escaped rather than refused.
var testOutputOps = map[string]bool{"ingestRunResults": true}

// textProblem says what is wrong with s as stored text, or "".
func textProblem(s string) string {
	n := 1
	for i := 0; i < len(s); n++ {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("is not valid UTF-8 (byte 0x%02X, character %d)", s[i], n)
		case r == 0:
			return fmt.Sprintf("contains a NUL character (U+0000, character %d)", n)
		}
		i += size
	}
	return ""
}

// checkText refuses parameters and, with body set, a JSON body that hold text the server cannot
// store. The body has been read into memory by checkJSONBody already.
func checkText(r *http.Request, route *routers.Route, params map[string]string, body bool) error {
	if err := checkParamsText(r, route, params); err != nil {
		return err
	}
	if !body || r.Body == nil || r.Body == http.NoBody || !isJSON(r.Header.Get("Content-Type")) {
		return nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return apierr.Wrap(err, apierr.BadRequest, "the request body could not be read", "send the whole body")
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	return checkBodyText(data)
}

// checkParamsText refuses a path, query or header parameter that is not text PostgreSQL can hold.
func checkParamsText(r *http.Request, route *routers.Route, params map[string]string) error {
	var problems []string
	for name, raw := range params {
		v, err := url.PathUnescape(raw)
		if err != nil {
			v = raw
		}
		if p := textProblem(v); p != "" {
			problems = append(problems, fmt.Sprintf("path parameter %q: %s", name, p))
		}
	}
	if p := textProblem(r.URL.Path); p != "" && len(problems) == 0 {
		problems = append(problems, "path: "+p)
	}
	// The raw query, decoded leniently: url.ParseQuery drops pairs it cannot decode.
	for _, pair := range strings.Split(r.URL.RawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		name, err1 := queryUnescape(k)
		value, err2 := queryUnescape(v)
		if err1 != nil || err2 != nil {
			continue // refused by the validator, or ignored
		}
		if p := textProblem(name); p != "" {
			problems = append(problems, fmt.Sprintf("query parameter name %q: %s", textclip.Counted(strconv.QuoteToASCII(name), 64), p))
		} else if p := textProblem(value); p != "" {
			problems = append(problems, fmt.Sprintf("query parameter %q: %s", textclip.Counted(name, 64), p))
		}
	}
	if route != nil && route.Operation != nil {
		for _, pr := range route.Operation.Parameters {
			if pr.Value == nil || pr.Value.In != "header" {
				continue
			}
			if p := textProblem(r.Header.Get(pr.Value.Name)); p != "" {
				problems = append(problems, fmt.Sprintf("header %q: %s", pr.Value.Name, p))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	hint := boundedProblems(problems)
	return apierr.New(apierr.ValidationFailed, "the request holds text the server cannot store", hint+"; send valid UTF-8 without NUL characters")
}

// checkBodyText refuses a JSON body one of whose strings (a member name or value) is not text
// PostgreSQL can hold, naming its JSON pointer.
func checkBodyText(body []byte) error {
	// Fast path: most bodies hold neither an escaped NUL, a surrogate escape nor invalid UTF-8.
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\u0000`)) && !hasSurrogateEscape(body) {
		return nil
	}
	ptr, problem, found := findTextFault(body)
	if !found {
		return nil
	}
	where := "body member " + ptr
	if ptr == "" {
		where = "body"
	}
	return apierr.New(apierr.ValidationFailed, "the request holds text the server cannot store",
		textclip.Counted(where, maxProblemLength)+": "+problem+"; send valid UTF-8 without NUL characters")
}

func queryUnescape(s string) (string, error) { return url.QueryUnescape(s) }

func hasSurrogateEscape(b []byte) bool {
	for i := 0; i+3 < len(b); i++ {
		if b[i] == '\\' && (b[i+1] == 'u' || b[i+1] == 'U') && (b[i+2] == 'd' || b[i+2] == 'D') {
			switch b[i+3] {
			case '8', '9', 'a', 'b', 'c', 'd', 'e', 'f', 'A', 'B', 'C', 'D', 'E', 'F':
				return true
			}
		}
	}
	return false
}

// frame is one open array or object of findTextFault's walk.
type frame struct {
	object    bool
	key       string
	index     int
	expectKey bool
}

// findTextFault walks a JSON text and returns the JSON pointer of the first string holding a NUL,
// invalid UTF-8 or a lone surrogate. Malformed JSON is left to the validator (found is false
// when the walk gets lost).
func findTextFault(data []byte) (pointer, problem string, found bool) {
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			b.WriteByte('/')
			if f.object {
				b.WriteString(strings.ReplaceAll(strings.ReplaceAll(f.key, "~", "~0"), "/", "~1"))
			} else {
				b.WriteString(strconv.Itoa(f.index))
			}
		}
		return b.String()
	}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			stack = append(stack, frame{object: true, expectKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			if len(stack) == 0 {
				return "", "", false
			}
			stack = stack[:len(stack)-1]
		case ',':
			if len(stack) == 0 {
				return "", "", false
			}
			top := &stack[len(stack)-1]
			if top.object {
				top.expectKey = true
			} else {
				top.index++
			}
		case '"':
			end, problem := scanString(data, i)
			if end < 0 {
				return "", "", false
			}
			isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].expectKey
			if isKey {
				var key string
				if problem == "" {
					_ = json.Unmarshal(data[i:end+1], &key)
				} else {
					// As sent, escapes and all; bytes that are not UTF-8 shown as U+FFFD.
					key = strings.ToValidUTF8(string(data[i+1:end]), "\uFFFD")
				}
				top := &stack[len(stack)-1]
				top.key, top.expectKey = key, false
				if problem != "" {
					return path(), "the member name " + problem, true
				}
			} else if problem != "" {
				return path(), problem, true
			}
			i = end
		}
	}
	return "", "", false
}

// scanString reads the JSON string starting at data[start] (a quote) and returns the index of its
// closing quote (-1 when there is none) and what is wrong with its text.
func scanString(data []byte, start int) (end int, problem string) {
	off := 1 // the character of the string's text, for the message
	for i := start + 1; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			return i, problem
		case c == '\\':
			if i+1 >= len(data) {
				return -1, ""
			}
			if data[i+1] != 'u' {
				i += 2
				off++
				continue
			}
			if i+6 > len(data) {
				return -1, ""
			}
			v, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 32)
			if err != nil {
				return -1, ""
			}
			i += 6
			switch {
			case v == 0 && problem == "":
				problem = fmt.Sprintf("contains a NUL character (\\u0000, character %d)", off)
			case v >= 0xD800 && v <= 0xDBFF:
				// A high surrogate must be followed by a low one.
				if i+6 <= len(data) && data[i] == '\\' && data[i+1] == 'u' {
					if lo, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 32); err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 6
						break
					}
				}
				if problem == "" {
					problem = fmt.Sprintf("contains a lone UTF-16 surrogate (\\u%04X, character %d), which is not a character", v, off)
				}
			case v >= 0xDC00 && v <= 0xDFFF && problem == "":
				problem = fmt.Sprintf("contains a lone UTF-16 surrogate (\\u%04X, character %d), which is not a character", v, off)
			}
			off++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 && problem == "" {
				problem = fmt.Sprintf("is not valid UTF-8 (byte 0x%02X, character %d)", c, off)
			}
			i += size
			off++
		}
	}
	return -1, ""
}
