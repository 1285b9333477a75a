package steplib

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBody bounds how much of a response body is kept.
const maxBody = 16 << 20

type httpState struct {
	baseURL string // set by http.base_url; overrides the config's
	// checkedBase is the last base URL checkWebURL accepted.
	checkedBase string
	headers     http.Header
	query       url.Values // for the next request only
	last        *httpResponse
}

type httpResponse struct {
	method, url string
	status      int
	statusText  string
	header      http.Header
	body        []byte
	duration    time.Duration

	parsed  bool
	json    any
	jsonErr error
}

func (r *httpResponse) JSON() (any, error) {
	if !r.parsed {
		r.parsed = true
		r.json, r.jsonErr = DecodeJSON(r.body)
		if r.jsonErr != nil {
			r.jsonErr = fmt.Errorf("the response body of %s %s is not JSON (%v): %s", r.method, r.url, r.jsonErr, snippet(r.body))
		}
	}
	return r.json, r.jsonErr
}

func snippet(b []byte) string {
	const n = 300
	if len(b) == 0 {
		return "(empty body)"
	}
	if !utf8.Valid(b) {
		return fmt.Sprintf("(%d bytes of binary data)", len(b))
	}
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// resolveURL joins a path to the base URL; an absolute URL stays as is. Whatever the result, it
// is an http or https URL with a host: a step never reads the server's disk (file:), nor any
// other scheme.
func (s *Session) resolveURL(target string) (string, error) {
	u, err := url.Parse(target)
	if err == nil && u.Scheme != "" {
		return target, checkWebURL(target)
	}
	base := s.http.baseURL
	if base == "" {
		base = s.cfg.BaseURL
	}
	if base == "" {
		return "", fmt.Errorf("%q is relative and there is no base URL: set one in the environment or with 'Given the base URL is \"…\"'", target)
	}
	if base != s.http.checkedBase {
		if err := checkWebURL(base); err != nil {
			return "", fmt.Errorf("base URL: %w", err)
		}
		s.http.checkedBase = base // every request of the scenario joins it: checked once
	}
	out := base
	if target != "" {
		out = strings.TrimRight(base, "/") + "/" + strings.TrimLeft(target, "/")
	}
	return out, checkWebURL(out)
}

// checkWebURL refuses anything but an absolute http or https URL with a host.
func checkWebURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %q is not an absolute http or https URL: steps open and request nothing else (the scheme is %q)", raw, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL %q has no host", raw)
	}
	return nil
}

func (s *Session) lastResponse() (*httpResponse, error) {
	if s.http.last == nil {
		return nil, fmt.Errorf("no request was sent yet in this scenario")
	}
	return s.http.last, nil
}

// send performs a request and keeps its response.
func (s *Session) send(ctx context.Context, c *call, method, target string, body io.Reader, contentType string) error {
	method = strings.ToUpper(method)
	switch method {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
	default:
		return fmt.Errorf("unknown HTTP method %q", method)
	}
	u, err := s.resolveURL(target)
	if err != nil {
		return err
	}
	if len(s.http.query) > 0 {
		pu, err := url.Parse(u)
		if err != nil {
			return fmt.Errorf("URL %q: %v", u, err)
		}
		q := pu.Query()
		for k, vs := range s.http.query {
			for _, v := range vs {
				q.Add(k, v)
			}
		}
		pu.RawQuery = q.Encode()
		u = pu.String()
		s.http.query = nil
	}
	var ht *TraceHTTP
	if rec := s.cfg.Recorder; rec != nil && s.depth == 0 {
		ht = &TraceHTTP{Method: method, URL: s.vars.Mask(u)}
		if body != nil {
			b, err := io.ReadAll(body)
			if err != nil {
				return fmt.Errorf("request %s %s: read the body: %v", method, u, err)
			}
			body = bytes.NewReader(b)
			ht.RequestBody = capText(s.vars.Mask(string(b)), rec.lim.BodyBytes)
		}
		defer rec.setHTTP(ht)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("request %s %s: %v", method, u, err)
	}
	for k, vs := range s.http.headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	if contentType != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", contentType)
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if ht != nil {
		ht.RequestHeaders = maskHeaders(s.vars, traceHeaders(req.Header))
		ht.DurationMs = time.Since(start).Milliseconds()
		if err != nil {
			ht.Error = s.vars.Mask(err.Error())
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return stepContextError(ctx)
		}
		return fmt.Errorf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if ctx.Err() != nil {
			return stepContextError(ctx)
		}
		return fmt.Errorf("%s %s: reading the response: %v", method, u, err)
	}
	d := time.Since(start)
	if ht != nil {
		ht.Status, ht.DurationMs = resp.StatusCode, d.Milliseconds()
		ht.ResponseHeaders = maskHeaders(s.vars, traceHeaders(resp.Header))
		ht.ResponseBody = capText(s.vars.Mask(string(data)), s.cfg.Recorder.lim.BodyBytes)
	}
	s.http.last = &httpResponse{method: method, url: u, status: resp.StatusCode, statusText: resp.Status, header: resp.Header, body: data, duration: d}
	c.rep.Log("info", method+" "+u+" → "+resp.Status+" in "+strconv.FormatInt(d.Milliseconds(), 10)+" ms ("+strconv.Itoa(len(data))+" bytes)")
	return nil
}

// responseError fails an assertion on the last response and attaches its body for diagnosis.
func (s *Session) responseError(c *call, format string, args ...any) error {
	if r := s.http.last; r != nil && len(r.body) > 0 {
		mt := r.header.Get("Content-Type")
		if mt == "" {
			mt = "application/octet-stream"
		}
		c.rep.Attach(Attachment{Name: "response body", MediaType: mt, Data: r.body})
	}
	return fmt.Errorf(format, args...)
}

// parseExpected reads an expected value: JSON when it parses, otherwise the text itself.
func parseExpected(s string) any {
	if v, err := DecodeJSON([]byte(s)); err == nil {
		return v
	}
	return s
}

// valueMatches compares a JSON value with an expected text: a string compares as text, anything
// else with the text parsed as JSON.
func valueMatches(actual any, expected string) bool {
	if str, ok := actual.(string); ok {
		return str == expected
	}
	return JSONEqual(actual, parseExpected(expected))
}

func (s *Session) jsonAt(c *call, path string) (any, error) {
	vals, singular, err := s.jsonSelect(c, path)
	if err != nil {
		return nil, err
	}
	if singular {
		return vals[0], nil
	}
	return vals, nil
}

// jsonSelect returns what the path selects in the last response's JSON: one value for a singular
// path (names and indexes), a list for others.
func (s *Session) jsonSelect(c *call, path string) ([]any, bool, error) {
	if _, err := CompileJSONPath(path); err != nil {
		return nil, false, err
	}
	r, err := s.lastResponse()
	if err != nil {
		return nil, false, err
	}
	doc, err := r.JSON()
	if err != nil {
		return nil, false, s.responseError(c, "%v", err)
	}
	vals, singular, err := SelectJSONPath(doc, path)
	if err != nil {
		return nil, false, s.responseError(c, "JSONPath %s: %v", path, err)
	}
	return vals, singular, nil
}

func httpImpls(m map[string]stepFunc) {
	m["http.base_url"] = func(_ context.Context, s *Session, c *call) error {
		if err := checkWebURL(c.str(0)); err != nil {
			return fmt.Errorf("base URL: %w", err)
		}
		s.http.baseURL = c.str(0)
		return nil
	}
	m["http.header"] = func(_ context.Context, s *Session, c *call) error {
		s.http.headers.Set(c.str(0), c.str(1))
		return nil
	}
	m["http.headers"] = func(_ context.Context, s *Session, c *call) error {
		for i, row := range c.table {
			if len(row) != 2 {
				return fmt.Errorf("data table row %d has %d cells; expected | name | value |", i+1, len(row))
			}
			s.http.headers.Set(row[0], row[1])
		}
		return nil
	}
	m["http.query"] = func(_ context.Context, s *Session, c *call) error {
		if s.http.query == nil {
			s.http.query = url.Values{}
		}
		s.http.query.Add(c.str(0), c.str(1))
		return nil
	}
	m["http.bearer"] = func(_ context.Context, s *Session, c *call) error {
		s.http.headers.Set("Authorization", "Bearer "+c.str(0))
		return nil
	}
	m["http.basic_auth"] = func(_ context.Context, s *Session, c *call) error {
		req, _ := http.NewRequest("GET", "http://x", nil)
		req.SetBasicAuth(c.str(0), c.str(1))
		s.vars.NoteCredential(c.str(0), c.str(1)) // its base64 is masked wherever it is echoed
		s.http.headers.Set("Authorization", req.Header.Get("Authorization"))
		return nil
	}
	m["http.request"] = func(ctx context.Context, s *Session, c *call) error {
		if c.doc == nil {
			return s.send(ctx, c, c.str(0), c.str(1), nil, "")
		}
		ct := "text/plain; charset=utf-8"
		mt := strings.ToLower(c.doc.MediaType)
		switch {
		case strings.Contains(mt, "json"):
			if !json.Valid([]byte(c.doc.Content)) {
				return fmt.Errorf("the docstring is marked %s but is not valid JSON", c.doc.MediaType)
			}
			ct = "application/json"
		case strings.Contains(mt, "/"):
			ct = c.doc.MediaType
		case mt == "xml":
			ct = "application/xml"
		case mt == "" && json.Valid([]byte(c.doc.Content)):
			ct = "application/json"
		}
		return s.send(ctx, c, c.str(0), c.str(1), strings.NewReader(c.doc.Content), ct)
	}
	m["http.request_form"] = func(ctx context.Context, s *Session, c *call) error {
		form := url.Values{}
		for i, row := range c.table {
			if len(row) != 2 {
				return fmt.Errorf("data table row %d has %d cells; expected | name | value |", i+1, len(row))
			}
			form.Add(row[0], row[1])
		}
		return s.send(ctx, c, c.str(0), c.str(1), strings.NewReader(form.Encode()), "application/x-www-form-urlencoded")
	}
	m["http.status"] = func(_ context.Context, s *Session, c *call) error {
		r, err := s.lastResponse()
		if err != nil {
			return err
		}
		want, err := c.int(0)
		if err != nil {
			return err
		}
		if int64(r.status) != want {
			return s.responseError(c, "%s %s answered %d, expected %d; body: %s", r.method, r.url, r.status, want, snippet(r.body))
		}
		return nil
	}
	m["http.header_is"] = func(_ context.Context, s *Session, c *call) error {
		r, err := s.lastResponse()
		if err != nil {
			return err
		}
		vals := r.header.Values(c.str(0))
		if len(vals) == 0 {
			return fmt.Errorf("the response has no header %q", c.str(0))
		}
		for _, v := range vals {
			if v == c.str(1) {
				return nil
			}
		}
		return fmt.Errorf("the response header %q is %q, expected %q", c.str(0), strings.Join(vals, ", "), c.str(1))
	}
	m["http.header_contains"] = func(_ context.Context, s *Session, c *call) error {
		r, err := s.lastResponse()
		if err != nil {
			return err
		}
		vals := r.header.Values(c.str(0))
		if len(vals) == 0 {
			return fmt.Errorf("the response has no header %q", c.str(0))
		}
		if !strings.Contains(strings.Join(vals, ", "), c.str(1)) {
			return fmt.Errorf("the response header %q is %q, which does not contain %q", c.str(0), strings.Join(vals, ", "), c.str(1))
		}
		return nil
	}
	m["http.body_contains"] = func(_ context.Context, s *Session, c *call) error {
		r, err := s.lastResponse()
		if err != nil {
			return err
		}
		if !strings.Contains(string(r.body), c.str(0)) {
			return s.responseError(c, "the response body does not contain %q; body: %s", c.str(0), snippet(r.body))
		}
		return nil
	}
	m["http.json_is"] = func(_ context.Context, s *Session, c *call) error {
		v, err := s.jsonAt(c, c.str(0))
		if err != nil {
			return err
		}
		if !valueMatches(v, c.str(1)) {
			return s.responseError(c, "the response JSON at %s is %s, expected %s", c.str(0), showJSON(v), showJSON(parseExpectedFor(v, c.str(1))))
		}
		return nil
	}
	m["http.json_contains"] = func(_ context.Context, s *Session, c *call) error {
		v, err := s.jsonAt(c, c.str(0))
		if err != nil {
			return err
		}
		switch x := v.(type) {
		case string:
			if strings.Contains(x, c.str(1)) {
				return nil
			}
		case []any:
			for _, e := range x {
				if valueMatches(e, c.str(1)) {
					return nil
				}
			}
		default:
			return fmt.Errorf("the response JSON at %s is %s; contains needs a string or an array", c.str(0), jsonKind(v))
		}
		return s.responseError(c, "the response JSON at %s is %s, which does not contain %q", c.str(0), showJSON(v), c.str(1))
	}
	m["http.json_matches"] = func(_ context.Context, s *Session, c *call) error {
		re, err := regexp.Compile(c.str(1))
		if err != nil {
			return fmt.Errorf("regular expression %q: %v", c.str(1), err)
		}
		v, err := s.jsonAt(c, c.str(0))
		if err != nil {
			return err
		}
		if !re.MatchString(JSONText(v)) {
			return s.responseError(c, "the response JSON at %s is %s, which does not match %q", c.str(0), showJSON(v), c.str(1))
		}
		return nil
	}
	m["http.json_exists"] = func(_ context.Context, s *Session, c *call) error {
		vals, _, err := s.jsonSelect(c, c.str(0))
		if err == nil && len(vals) == 0 {
			return s.responseError(c, "JSONPath %s selects nothing in the response JSON", c.str(0))
		}
		return err
	}
	m["http.json_length"] = func(_ context.Context, s *Session, c *call) error {
		v, err := s.jsonAt(c, c.str(0))
		if err != nil {
			return err
		}
		want, err := c.int(1)
		if err != nil {
			return err
		}
		var n int
		switch x := v.(type) {
		case []any:
			n = len(x)
		case map[string]any:
			n = len(x)
		case string:
			n = utf8.RuneCountInString(x)
		default:
			return fmt.Errorf("the response JSON at %s is %s, which has no length", c.str(0), jsonKind(v))
		}
		if int64(n) != want {
			return s.responseError(c, "the response JSON at %s has %d item(s), expected %d", c.str(0), n, want)
		}
		return nil
	}
	m["http.json_body_contains"] = func(_ context.Context, s *Session, c *call) error {
		if c.doc == nil {
			return fmt.Errorf("the step needs a docstring with the expected JSON")
		}
		want, err := DecodeJSON([]byte(c.doc.Content))
		if err != nil {
			return fmt.Errorf("the expected JSON in the docstring is invalid: %v", err)
		}
		doc, err := s.jsonAt(c, "$")
		if err != nil {
			return err
		}
		if ok, why := JSONContains(doc, want, "$"); !ok {
			return s.responseError(c, "the response JSON does not contain the expected JSON: %s", why)
		}
		return nil
	}
	m["http.json_schema"] = func(_ context.Context, s *Session, c *call) error {
		return s.checkSchema(c, SchemaOptions{})
	}
	m["http.json_schema_formats"] = func(_ context.Context, s *Session, c *call) error {
		return s.checkSchema(c, SchemaOptions{AssertFormat: true})
	}
	m["http.response_time"] = func(_ context.Context, s *Session, c *call) error {
		r, err := s.lastResponse()
		if err != nil {
			return err
		}
		ms, err := c.int(0)
		if err != nil {
			return err
		}
		if r.duration >= time.Duration(ms)*time.Millisecond {
			return fmt.Errorf("%s %s took %d ms, not below %d ms", r.method, r.url, r.duration.Milliseconds(), ms)
		}
		return nil
	}
	m["http.capture_json"] = func(_ context.Context, s *Session, c *call) error {
		v, err := s.jsonAt(c, c.str(0))
		if err != nil {
			return err
		}
		s.vars.Set(c.str(1), JSONText(v))
		c.rep.Log("debug", fmt.Sprintf("stored %s = %s", c.str(1), s.vars.Mask(JSONText(v))))
		return nil
	}
	m["http.capture_header"] = func(_ context.Context, s *Session, c *call) error {
		r, err := s.lastResponse()
		if err != nil {
			return err
		}
		v := r.header.Get(c.str(0))
		if v == "" {
			return fmt.Errorf("the response has no header %q", c.str(0))
		}
		s.vars.Set(c.str(1), v)
		return nil
	}
}

// maxListedViolations bounds a failed schema step's message; the count says how many there were.
const maxListedViolations = 20

func (s *Session) checkSchema(c *call, opts SchemaOptions) error {
	if c.doc == nil {
		return fmt.Errorf("the step needs a docstring with the JSON Schema")
	}
	schema, err := DecodeJSON([]byte(c.doc.Content))
	if err != nil {
		return fmt.Errorf("the JSON Schema in the docstring is invalid JSON: %v", err)
	}
	doc, err := s.jsonAt(c, "$")
	if err != nil {
		return err
	}
	violations, err := ValidateJSONSchemaWith(schema, doc, opts)
	if err != nil {
		return err
	}
	if len(violations) == 0 {
		return nil
	}
	lines := make([]string, 0, min(len(violations), maxListedViolations)+1)
	for i, v := range violations {
		if i == maxListedViolations {
			lines = append(lines, fmt.Sprintf("  … and %d more", len(violations)-i))
			break
		}
		lines = append(lines, "  "+v.String())
	}
	return s.responseError(c, "the response JSON does not match the schema (%d violation(s)):\n%s", len(violations), strings.Join(lines, "\n"))
}

// parseExpectedFor renders the expected value the way valueMatches compared it.
func parseExpectedFor(actual any, expected string) any {
	if _, ok := actual.(string); ok {
		return expected
	}
	return parseExpected(expected)
}
