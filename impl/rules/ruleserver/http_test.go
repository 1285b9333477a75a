package ruleserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/rulesapi"
	"github.com/sdods/sdods/impl/rules/ruleserver"
	"github.com/sdods/sdods/impl/rules/yamlrules"
)

// fixtureServer serves signup (YAML source), checkout (source and its bundle) and loan (bundle
// only).
func fixtureServer(t *testing.T) *server {
	dir := rulesDir(t, "signup/signup.yaml", "checkout/checkout.yaml", "checkout/checkout.bundle.json", "loan/loan.bundle.json")
	// A JSON source: the address book fixture, written as JSON.
	src, err := os.ReadFile(filepath.Join(fixtures, "addressbook", "addressbook.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, problems := yamlrules.ReadYAML(src)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	writeAtomic(t, filepath.Join(dir, "addressbook.json"), doc.JSON)
	// Not rulesets: ignored.
	writeAtomic(t, filepath.Join(dir, "README.md"), []byte("# rules\n"))
	writeAtomic(t, filepath.Join(dir, ".signup.yaml.swp"), []byte("not yaml: ["))
	return startServer(t, ruleserver.Config{RulesDir: dir, Token: token})
}

func TestToken(t *testing.T) {
	s := fixtureServer(t)
	cases := []struct {
		name, path, authz string
		want              int
	}{
		{"listing without a token", "/rulesets", "", 401},
		{"bundle without a token", "/rulesets/signup/bundle", "", 401},
		{"manifest without a token", "/rulesets/signup/manifest?channel=client", "", 401},
		{"wrong token", "/rulesets/signup/bundle", "Bearer nope", 401},
		{"token with a suffix", "/rulesets/signup/bundle", "Bearer " + token + "x", 401},
		{"token prefix", "/rulesets/signup/bundle", "Bearer " + token[:5], 401},
		{"other scheme", "/rulesets/signup/bundle", "Basic " + token, 401},
		{"no scheme", "/rulesets/signup/bundle", token, 401},
		{"right token", "/rulesets/signup/bundle", "Bearer " + token, 200},
		{"scheme is case-insensitive", "/rulesets", "bearer " + token, 200},
		{"liveness needs none", "/livez", "", 200},
		{"readiness needs none", "/readyz", "", 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h []string
			if c.authz != "" {
				h = []string{"Authorization", c.authz}
			}
			r := do(t, nil, "GET", s.URL+c.path, nil, h...)
			if r.Status != c.want {
				t.Fatalf("status %d, want %d: %s", r.Status, c.want, r.Body)
			}
			if c.want == 401 && (r.errorCode() != "UNAUTHORIZED" || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer")) {
				t.Fatalf("401 without the error body or challenge: %v %s", r.Header, r.Body)
			}
		})
	}
	t.Run("evaluation without a token", func(t *testing.T) {
		r := do(t, nil, "POST", s.URL+"/evaluations", []byte(`{"ruleset":"signup","data":{}}`))
		if r.Status != 401 || r.errorCode() != "UNAUTHORIZED" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

func TestIfNoneMatch(t *testing.T) {
	s := fixtureServer(t)
	r := do(t, nil, "GET", s.URL+"/rulesets/signup/bundle", nil, auth()...)
	etag := r.Header.Get("ETag")
	var b rulesapi.Bundle
	readJSON(t, r.Body, &b)
	if r.Status != 200 || etag != `"`+b.Ruleset.Checksum+`"` || !strings.HasPrefix(b.Ruleset.Checksum, "sha256:") {
		t.Fatalf("ETag %q, checksum %q, status %d", etag, b.Ruleset.Checksum, r.Status)
	}
	opaque := strings.Trim(etag, `"`)
	cases := []struct {
		name   string
		values []string // one header line each
		want   int
	}{
		{"absent", nil, 200},
		{"strong, equal", []string{etag}, 304},
		{"weak, equal (weak comparison)", []string{"W/" + etag}, 304},
		{"different", []string{`"sha256:0000"`}, 200},
		{"weak, different", []string{`W/"sha256:0000"`}, 200},
		{"star", []string{"*"}, 304},
		{"star with white space", []string{"  *  "}, 304},
		{"list, match last", []string{`"a", W/"b", ` + etag}, 304},
		{"list, match first, no spaces", []string{etag + `,"a"`}, 304},
		{"list, no match", []string{`"a", "b"`}, 200},
		{"list with empty elements", []string{`, "a",, ` + etag + ` ,`}, 304},
		{"two header lines, match in the second", []string{`"a"`, "W/" + etag}, 304},
		{"two header lines, no match", []string{`"a"`, `"b"`}, 200},
		{"unquoted tag is malformed, ignored", []string{opaque}, 200},
		{"lower-case w/ is malformed, ignored", []string{"w/" + etag}, 200},
		{"unterminated quote, ignored", []string{`"` + opaque}, 200},
		{"star inside a list is malformed, ignored", []string{`"a", *`}, 200},
		{"garbage after a tag, ignored", []string{etag + ` x`}, 200},
		{"a tag with a space inside is malformed", []string{`"sha256 x"`}, 200},
		{"prefix of the tag", []string{`"` + opaque[:20] + `"`}, 200},
	}
	for _, route := range []string{"/rulesets/signup/bundle", "/rulesets/signup/manifest?channel=client", "/rulesets/loan-application/manifest?channel=server"} {
		full := do(t, nil, "GET", s.URL+route, nil, auth()...)
		for _, c := range cases {
			t.Run(route+"/"+c.name, func(t *testing.T) {
				h := auth()
				for _, v := range c.values {
					h = append(h, "If-None-Match", v)
				}
				want := c.want
				if strings.Contains(route, "loan") && strings.Contains(strings.Join(c.values, ""), opaque) {
					want = 200 // another ruleset's tag never matches
				}
				r := do(t, nil, "GET", s.URL+route, nil, h...)
				if r.Status != want {
					t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
				}
				if r.Header.Get("ETag") != full.Header.Get("ETag") || r.Header.Get("ETag") == "" {
					t.Fatalf("ETag %q, want %q", r.Header.Get("ETag"), full.Header.Get("ETag"))
				}
				if want == 304 && len(r.Body) != 0 {
					t.Fatalf("304 with a body")
				}
				if want == 200 && !bytes.Equal(r.Body, full.Body) {
					t.Fatalf("200 with another body")
				}
			})
		}
	}
	t.Run("unknown ruleset with star is 404", func(t *testing.T) {
		r := do(t, nil, "GET", s.URL+"/rulesets/nope/bundle", nil, append(auth(), "If-None-Match", "*")...)
		if r.Status != 404 || r.errorCode() != "NOT_FOUND" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

func TestMalformedPercentEncoding(t *testing.T) {
	s := fixtureServer(t)
	a := "Authorization: Bearer " + token + "\r\n"
	cases := []struct {
		name, target string
		want         int
		code         string
	}{
		{"bad hex digits in the path", "/rulesets/%zz/bundle", 400, "BAD_REQUEST"},
		{"truncated escape in the path", "/rulesets/sign%2/bundle", 400, "BAD_REQUEST"},
		{"percent at the end of the path", "/rulesets/signup/bundle%", 400, "BAD_REQUEST"},
		{"bad escape in the query", "/rulesets/signup/manifest?channel=%zz", 400, "BAD_REQUEST"},
		{"bad escape in a probe's path", "/live%zz", 400, "BAD_REQUEST"},
		{"encoded slash is a well-formed unknown id", "/rulesets/sign%2Fup/bundle", 404, "NOT_FOUND"},
		{"encoded NUL is a well-formed unknown id", "/rulesets/%00/bundle", 404, "NOT_FOUND"},
		{"invalid UTF-8 is a well-formed unknown id", "/rulesets/%ff%fe/bundle", 404, "NOT_FOUND"},
		{"well-formed escapes of a known id", "/rulesets/%73ignup/bundle", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rawRequest(t, s.Addr, "GET "+c.target+" HTTP/1.1\r\nHost: x\r\n"+a+"Connection: close\r\n\r\n")
			if r.Status != c.want || r.errorCode() != c.code {
				t.Fatalf("status %d code %q, want %d %q: %s", r.Status, r.errorCode(), c.want, c.code, r.Body)
			}
			if c.want == 400 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("Content-Type %q", r.Header.Get("Content-Type"))
			}
		})
	}
	t.Run("a header block over the limit is answered in the error body too", func(t *testing.T) {
		r := rawRequest(t, s.Addr, "GET /livez HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 100<<10)+"\r\n\r\n")
		if r.Status != 431 || r.errorCode() != "HEADERS_TOO_LARGE" {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	})
	t.Run("the server still serves", func(t *testing.T) {
		if r := do(t, nil, "GET", s.URL+"/rulesets", nil, auth()...); r.Status != 200 {
			t.Fatalf("%d", r.Status)
		}
	})
}

// uploader writes an endless body slowly and counts what it wrote.
type uploader struct{ written atomic.Int64 }

func (u *uploader) upload(c net.Conn, chunked bool, stop <-chan struct{}) {
	chunk := bytes.Repeat([]byte(" "), 32<<10)
	for {
		select {
		case <-stop:
			return
		default:
		}
		var err error
		if chunked {
			_, err = fmt.Fprintf(c, "%x\r\n%s\r\n", len(chunk), chunk)
		} else {
			_, err = c.Write(chunk)
		}
		if err != nil {
			return
		}
		u.written.Add(int64(len(chunk)))
		time.Sleep(2 * time.Millisecond)
	}
}

func TestPayloadTooLargeWhileUploading(t *testing.T) {
	const limit = 64 << 10
	dir := rulesDir(t, "signup/signup.yaml")
	s := startServer(t, ruleserver.Config{RulesDir: dir, Token: token, MaxBody: limit})
	const huge = int64(4) << 30 // far more than the test ever sends
	for _, c := range []struct {
		name    string
		headers string
		chunked bool
	}{
		{"declared length over the limit", fmt.Sprintf("Content-Length: %d\r\n", huge), false},
		{"declared length over the limit, expecting 100-continue", fmt.Sprintf("Content-Length: %d\r\nExpect: 100-continue\r\n", huge), false},
		{"chunked body that grows past the limit", "Transfer-Encoding: chunked\r\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := "POST /evaluations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\nContent-Type: application/json\r\n" + c.headers + "\r\n"
			start := `{"ruleset":"signup","data":{"pad":"`
			if c.chunked {
				start = fmt.Sprintf("%x\r\n%s\r\n", len(start), start)
			}
			if _, err := io.WriteString(conn, head+start); err != nil {
				t.Fatal(err)
			}
			up := &uploader{}
			stop := make(chan struct{})
			go up.upload(conn, c.chunked, stop)
			defer close(stop)
			resp, err := http.ReadResponse(bufioReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			sent := up.written.Load()
			r := response{Status: resp.StatusCode, Header: resp.Header, Body: body}
			if r.Status != 413 || r.errorCode() != "PAYLOAD_TOO_LARGE" {
				t.Fatalf("status %d: %s", r.Status, body)
			}
			// The answer came while the client was still uploading: far from the whole body.
			if sent >= huge/2 {
				t.Fatalf("the server read %d bytes before answering", sent)
			}
			t.Logf("413 after the client had sent %d bytes", sent)
		})
	}
	t.Run("a body under the limit is served", func(t *testing.T) {
		pad := strings.Repeat("x", limit/2)
		r := do(t, nil, "POST", s.URL+"/evaluations", []byte(`{"ruleset":"signup","data":{"pad":"`+pad+`"}}`), auth()...)
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

func TestEvaluate(t *testing.T) {
	s := fixtureServer(t)
	var golden struct {
		Tests []struct {
			ID       string          `json:"id"`
			Channel  string          `json:"channel"`
			Request  json.RawMessage `json:"request"`
			Expected struct {
				Findings json.RawMessage `json:"findings"`
				States   json.RawMessage `json:"states"`
			} `json:"expected"`
		} `json:"tests"`
	}
	b, err := os.ReadFile(filepath.Join(fixtures, "signup", "evaluations.json"))
	if err != nil {
		t.Fatal(err)
	}
	readJSON(t, b, &golden)
	for _, g := range golden.Tests {
		if g.Channel != "" && g.Channel != "server" {
			continue // POST /evaluations evaluates the server channel
		}
		t.Run(g.ID, func(t *testing.T) {
			var req map[string]any
			readJSON(t, g.Request, &req)
			req["ruleset"] = "signup"
			body, _ := json.Marshal(req)
			r := do(t, nil, "POST", s.URL+"/evaluations", body, auth()...)
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			var got struct {
				Ruleset  rulesapi.RulesetRef `json:"ruleset"`
				Findings json.RawMessage     `json:"findings"`
				States   json.RawMessage     `json:"states"`
			}
			readJSON(t, r.Body, &got)
			if got.Ruleset.Id != "signup" || !jsonEqual(t, got.Findings, g.Expected.Findings) || !jsonEqual(t, got.States, g.Expected.States) {
				t.Fatalf("got %s\nwant findings %s states %s", r.Body, g.Expected.Findings, g.Expected.States)
			}
		})
	}
	deep := strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65)
	deep64 := strings.Repeat(`{"a":`, 63) + "1" + strings.Repeat("}", 63)
	bad := []struct {
		name, body, ctype string
		status            int
		code, mentions    string
	}{
		{"data nested 65 deep", `{"ruleset":"signup","data":` + deep + `}`, "", 400, "BAD_REQUEST", "64"},
		{"ctx nested 65 deep", `{"ruleset":"signup","data":{},"ctx":` + deep + `}`, "", 400, "BAD_REQUEST", "ctx"},
		{"actor nested 65 deep", `{"ruleset":"signup","data":null,"actor":` + deep + `}`, "", 400, "BAD_REQUEST", "actor"},
		{"original nested 65 deep", `{"ruleset":"signup","data":{},"original":` + deep + `}`, "", 400, "BAD_REQUEST", "original"},
		{"data that is an array", `{"ruleset":"signup","data":[1]}`, "", 400, "BAD_REQUEST", "data"},
		{"data missing", `{"ruleset":"signup"}`, "", 400, "BAD_REQUEST", "data"},
		{"ruleset missing", `{"data":{}}`, "", 400, "BAD_REQUEST", "ruleset"},
		{"unknown member", `{"ruleset":"signup","data":{},"extra":1}`, "", 400, "BAD_REQUEST", "extra"},
		{"unknown view member", `{"ruleset":"signup","data":{},"view":{"tab":"x"}}`, "", 400, "BAD_REQUEST", "tab"},
		{"malformed JSON", `{"ruleset":"signup","data":{`, "", 400, "BAD_REQUEST", "JSON"},
		{"number beyond double range", `{"ruleset":"signup","data":{"n":1e400}}`, "", 400, "BAD_REQUEST", ""},
		{"unknown ruleset", `{"ruleset":"nope","data":{}}`, "", 404, "NOT_FOUND", "nope"},
		{"not JSON content", `{"ruleset":"signup","data":{}}`, "text/plain", 415, "UNSUPPORTED_MEDIA_TYPE", ""},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			h := auth()
			if c.ctype != "" {
				h = append(h, "Content-Type", c.ctype)
			}
			req, _ := http.NewRequest("POST", s.URL+"/evaluations", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			for i := 0; i < len(h); i += 2 {
				req.Header.Set(h[i], h[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r := response{Status: resp.StatusCode, Body: body}
			if r.Status != c.status || r.errorCode() != c.code || !strings.Contains(string(body), c.mentions) {
				t.Fatalf("status %d code %q, want %d %q mentioning %q: %s", r.Status, r.errorCode(), c.status, c.code, c.mentions, body)
			}
		})
	}
	t.Run("data nested 64 deep is accepted", func(t *testing.T) {
		r := do(t, nil, "POST", s.URL+"/evaluations", []byte(`{"ruleset":"signup","data":`+deep64+`}`), auth()...)
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("every route answers unknown paths and methods in the error body", func(t *testing.T) {
		if r := do(t, nil, "GET", s.URL+"/nope", nil, auth()...); r.Status != 404 || r.errorCode() != "NOT_FOUND" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := do(t, nil, "DELETE", s.URL+"/rulesets", nil, auth()...); r.Status != 405 || r.errorCode() != "METHOD_NOT_ALLOWED" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := do(t, nil, "GET", s.URL+"/rulesets/signup/manifest?channel=web", nil, auth()...); r.Status != 400 || r.errorCode() != "BAD_REQUEST" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

func jsonEqual(t testing.TB, a, b json.RawMessage) bool {
	var x, y any
	readJSON(t, a, &x)
	readJSON(t, b, &y)
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func TestListingAndReadiness(t *testing.T) {
	s := fixtureServer(t)
	r := do(t, nil, "GET", s.URL+"/rulesets", nil, auth()...)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	readJSON(t, r.Body, &list)
	byID := map[string]map[string]any{}
	for _, it := range list.Items {
		byID[it["id"].(string)] = it
	}
	if len(byID) != 4 {
		t.Fatalf("listing %s", r.Body)
	}
	if ab := byID["address-book"]; ab == nil || ab["source"] != "source" || ab["channels"] == nil {
		t.Fatalf("the JSON source is not listed as one: %v", ab)
	}
	loan := byID["loan-application"]
	if len(loan) != 4 || loan["source"] != "bundle" || loan["version"] == nil || loan["checksum"] == nil {
		t.Fatalf("a ruleset from a bundle lists id, version, checksum (and source) only: %v", loan)
	}
	if byID["checkout"]["source"] != "source" { // its bundle next to it has the same checksum
		t.Fatalf("checkout: %v", byID["checkout"])
	}
	if got := fmt.Sprint(byID["checkout"]["missingOperators"]); got != "[x-luhn]" {
		t.Fatalf("checkout missing operators %s", got)
	}
	if got := fmt.Sprint(byID["signup"]["missingOperators"], byID["signup"]["channels"]); got != "[] [client server]" {
		t.Fatalf("signup %s", got)
	}
	var ready rulesapi.Readiness
	rr := do(t, nil, "GET", s.URL+"/readyz", nil)
	readJSON(t, rr.Body, &ready)
	if rr.Status != 200 || ready.Status != "ready" || len(ready.Rulesets) != 4 || ready.LastReload == nil || !ready.LastReload.Ok {
		t.Fatalf("readiness %d %s", rr.Status, rr.Body)
	}
	// The union includes the loan bundle's operators, which its listing does not show.
	if got := strings.Join(ready.MissingOperators, ","); got != "x-luhn,x-test-sum" {
		t.Fatalf("missing operators %q", got)
	}
	t.Run("manifest of one channel", func(t *testing.T) {
		r := do(t, nil, "GET", s.URL+"/rulesets/signup/manifest?channel=client", nil, auth()...)
		var m rulesapi.Manifest
		readJSON(t, r.Body, &m)
		if r.Status != 200 || m.Channel != "client" || m.Ruleset.Id != "signup" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

func TestNotReadyWithoutRules(t *testing.T) {
	dir := t.TempDir()
	writeAtomic(t, filepath.Join(dir, "broken.yaml"), []byte("ruleset:\n  id: broken\n  version: '1'\n  rules: [{id: r, target: {type: Nope}, code: X, when: true, message: m}]\n"))
	s := startServer(t, ruleserver.Config{RulesDir: dir, Token: token})
	r := do(t, nil, "GET", s.URL+"/readyz", nil)
	var ready rulesapi.Readiness
	readJSON(t, r.Body, &ready)
	if r.Status != 503 || ready.Status != "not_ready" || ready.LastReload == nil || ready.LastReload.Ok || len(ready.LastReload.Problems) == 0 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if p := ready.LastReload.Problems[0]; p.File != "broken.yaml" {
		t.Fatalf("problem %+v", p)
	}
	if r := do(t, nil, "POST", s.URL+"/evaluations", []byte(`{"ruleset":"broken","data":{}}`), auth()...); r.Status != 503 || r.errorCode() != "NOT_READY" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

func TestDuplicateRulesetRefused(t *testing.T) {
	dir := t.TempDir()
	writeAtomic(t, filepath.Join(dir, "signup.yaml"), signupVersion(t, "1.0.0"))
	writeAtomic(t, filepath.Join(dir, "signup-next.yaml"), signupVersion(t, "2.0.0"))
	s := startServer(t, ruleserver.Config{RulesDir: dir, Token: token})
	status, r := readiness(t, s.URL)
	if status != 503 || r.LastReload == nil || len(r.LastReload.Problems) != 1 || r.LastReload.Problems[0].Code != "RULESET_DUPLICATE" {
		t.Fatalf("%d %+v", status, r)
	}
}

// TestDirectRouteMatchesPipeline sends the same evaluations to /evaluations, answered by the
// direct route, and to /evaluations?via=pipeline, which takes the general pipeline (routing and
// validation by openapi/rules.yaml): status, error body and result must be the same bytes.
func TestDirectRouteMatchesPipeline(t *testing.T) {
	dir := rulesDir(t, "signup/signup.yaml")
	s := startServer(t, ruleserver.Config{RulesDir: dir, Token: token, MaxBody: 512})
	ok := `{"ruleset":"signup","data":{"account":{"email":"x"}},"ctx":{"today":"2025-06-15"}}`
	cases := []struct {
		name, body, ctype, authz string
		chunked                  bool
	}{
		{"evaluation", ok, "application/json", "Bearer " + token, false},
		{"chunked evaluation", ok, "application/json", "Bearer " + token, true},
		{"media type with parameters", ok, "application/json; charset=utf-8", "Bearer " + token, false},
		{"no token", ok, "application/json", "", false},
		{"wrong token", ok, "application/json", "Bearer nope", false},
		{"wrong media type", ok, "text/plain", "Bearer " + token, false},
		{"malformed media type", ok, "application/", "Bearer " + token, false},
		{"empty body", "", "application/json", "Bearer " + token, false},
		{"malformed JSON", `{"ruleset":"signup",` + "\n" + `"data":{]}`, "application/json", "Bearer " + token, false},
		{"unknown member", `{"ruleset":"signup","data":{},"x":1}`, "application/json", "Bearer " + token, false},
		{"unknown ruleset", `{"ruleset":"nope","data":{}}`, "application/json", "Bearer " + token, false},
		{"ruleset last", `{"data":{"account":{"email":"x"}},"ctx":{"today":"2025-06-15"},"ruleset":"signup"}`, "application/json", "Bearer " + token, false},
		{"escaped member name", `{"rules\u0065t":"signup","data":{}}`, "application/json", "Bearer " + token, false},
		{"duplicate ruleset", `{"ruleset":"nope","data":{},"ruleset":"signup"}`, "application/json", "Bearer " + token, false},
		{"ruleset not a string", `{"ruleset":1,"data":{}}`, "application/json", "Bearer " + token, false},
		{"malformed after the ruleset", `{"ruleset":"signup","data":{"a":tru}}`, "application/json", "Bearer " + token, false},
		{"over the limit", `{"ruleset":"signup","data":{"s":"` + strings.Repeat("x", 600) + `"}}`, "application/json", "Bearer " + token, false},
		{"over the limit, chunked", `{"ruleset":"signup","data":{"s":"` + strings.Repeat("x", 600) + `"}}`, "application/json", "Bearer " + token, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got [2]response
			for i, path := range []string{"/evaluations", "/evaluations?via=pipeline"} {
				var body io.Reader = strings.NewReader(c.body)
				if c.chunked {
					body = io.MultiReader(body) // unknown length: sent chunked
				}
				req, _ := http.NewRequest("POST", s.URL+path, body)
				req.Header.Set("Content-Type", c.ctype)
				if c.authz != "" {
					req.Header.Set("Authorization", c.authz)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got[i] = response{Status: resp.StatusCode, Header: resp.Header, Body: b}
			}
			if got[0].Status != got[1].Status || !bytes.Equal(got[0].Body, got[1].Body) ||
				got[0].Header.Get("Content-Type") != got[1].Header.Get("Content-Type") ||
				got[0].Header.Get("Content-Length") != got[1].Header.Get("Content-Length") {
				t.Fatalf("direct: %d %v %s\npipeline: %d %v %s", got[0].Status, got[0].Header, got[0].Body, got[1].Status, got[1].Header, got[1].Body)
			}
		})
	}
}

// TestUnparsableRequests sends raw requests net/http refuses before any handler runs, and bodies
// that are not JSON: each gets the error body with a code of its status and a message that names
// the problem (and, for JSON, where it is).
func TestUnparsableRequests(t *testing.T) {
	dir := rulesDir(t, "signup/signup.yaml")
	s := startServer(t, ruleserver.Config{RulesDir: dir, Token: token})
	a := "Authorization: Bearer " + token + "\r\nContent-Type: application/json\r\n"
	post := func(headers, body string) string {
		return "POST /evaluations HTTP/1.1\r\nHost: x\r\n" + a + headers + "Connection: close\r\n\r\n" + body
	}
	withLength := func(body string) string { return post(fmt.Sprintf("Content-Length: %d\r\n", len(body)), body) }
	cases := []struct {
		name, raw string
		status    int
		code      string
		says      []string
	}{
		{"negative Content-Length", post("Content-Length: -1\r\n", "{}"), 400, "BAD_REQUEST", []string{`Content-Length "-1" is not a non-negative decimal number`}},
		{"Content-Length that is not a number", post("Content-Length: 1x\r\n", "{}"), 400, "BAD_REQUEST", []string{`Content-Length "1x"`}},
		{"two Content-Lengths that disagree", post("Content-Length: 2\r\nContent-Length: 3\r\n", "{}"), 400, "BAD_REQUEST", []string{"disagree", `"2, 3"`}},
		{"HTTP/9.9", "GET /livez HTTP/9.9\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED", []string{"HTTP version"}},
		{"HTTP/2.0 in plain text", "GET /livez HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED", []string{"HTTP version"}},
		{"malformed HTTP version", "GET /livez HTTP/x.y\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST", []string{"HTTP version is malformed", `"HTTP/x.y"`}},
		{"request line without a version", "GET /livez\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST", []string{"request line is malformed"}},
		{"malformed method", "GE(T /livez HTTP/1.1\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST", []string{"method is malformed"}},
		{"malformed percent-encoding", "GET /live%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST", []string{"percent-encoding"}},
		{"header line without a colon", "GET /livez HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400, "BAD_REQUEST", []string{"header line is malformed", `"NoColon"`}},
		{"two Host headers", "GET /livez HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, "BAD_REQUEST", []string{"more than one Host"}},
		{"no Host header", "GET /livez HTTP/1.1\r\n\r\n", 400, "BAD_REQUEST", []string{"Host"}},
		{"unsupported Transfer-Encoding", post("Transfer-Encoding: gzip\r\n", ""), 501, "TRANSFER_ENCODING_UNSUPPORTED", []string{"Transfer-Encoding"}},
		{"JSON syntax error", withLength("{\"ruleset\":\"signup\",\n  \"data\": {]}"), 400, "BAD_REQUEST", []string{"not valid JSON", "line 2, column 12 (byte offset 32)"}},
		{"truncated JSON", withLength(`{"ruleset":"signup","data":{`), 400, "BAD_REQUEST", []string{"line 1, column 29 (byte offset 28)"}},
		{"JSON with trailing data", withLength(`{"ruleset":"signup","data":{}} x`), 400, "BAD_REQUEST", []string{"line 1, column 32 (byte offset 31)"}},
		{"column counts characters", withLength(`{"ruleset":"é", x}`), 400, "BAD_REQUEST", []string{"line 1, column 17 (byte offset 17)"}},
		{"empty body", withLength(""), 400, "BAD_REQUEST", []string{"line 1, column 1 (byte offset 0)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rawRequest(t, s.Addr, c.raw)
			var e struct {
				Error struct{ Code, Message, Hint string } `json:"error"`
			}
			readJSON(t, r.Body, &e)
			if r.Status != c.status || e.Error.Code != c.code || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s, want %d %s: %s", r.Status, e.Error.Code, c.status, c.code, r.Body)
			}
			for _, say := range c.says {
				if !strings.Contains(e.Error.Message, say) {
					t.Fatalf("the message does not say %q: %s", say, r.Body)
				}
			}
			if e.Error.Hint == "" || strings.Contains(e.Error.Message, "percent") != strings.Contains(c.name, "percent") {
				t.Fatalf("hint or wording: %s", r.Body)
			}
		})
	}
}
