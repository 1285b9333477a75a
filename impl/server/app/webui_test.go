package app_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/webui"
)

// TestWebUIServing is issue 25 item 1 over HTTP: / is the embedded build's page with a CSP that
// allows no inline script; its hashed assets are cached for a year; client-side routes fall back
// to the page; the API's own paths and a missing asset stay JSON errors.
func TestWebUIServing(t *testing.T) {
	s := apptest.Start(t)
	status, body, h := s.Do(t, http.MethodGet, "/", "", nil)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", status, h.Get("Content-Type"))
	}
	csp := h.Get("Content-Security-Policy")
	if csp != webui.CSP || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "script-src 'self' 'unsafe-inline'") {
		t.Errorf("CSP %q", csp)
	}
	if h.Get("Cache-Control") != "no-cache" || h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("page headers: %v", h)
	}
	page := string(body)
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).MatchString(page) {
		t.Errorf("the page has an inline script:\n%s", page)
	}
	m := regexp.MustCompile(`src="(/assets/[^"]+\.js)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page names no script asset (is impl/server/webui/dist built?):\n%s", page)
	}
	status, js, h := s.Do(t, http.MethodGet, m[1], "", nil)
	if status != http.StatusOK || !strings.Contains(h.Get("Content-Type"), "javascript") || len(js) < 1000 {
		t.Fatalf("GET %s: %d %s %d bytes", m[1], status, h.Get("Content-Type"), len(js))
	}
	if h.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("asset Cache-Control %q", h.Get("Cache-Control"))
	}
	// A client that accepts gzip gets the script compressed (cached per file), which decompresses
	// to the same bytes; the answer varies on Accept-Encoding either way.
	if !strings.Contains(h.Get("Vary"), "Accept-Encoding") {
		t.Errorf("identity asset Vary %q", h.Get("Vary"))
	}
	for i := 0; i < 2; i++ {
		status, gz, gh := s.Do(t, http.MethodGet, m[1], "", nil, "Accept-Encoding", "br, gzip;q=0.8")
		if status != http.StatusOK || gh.Get("Content-Encoding") != "gzip" || !strings.Contains(gh.Get("Vary"), "Accept-Encoding") {
			t.Fatalf("GET %s with gzip: %d %v", m[1], status, gh)
		}
		if len(gz)*2 > len(js) {
			t.Errorf("gzip body %d bytes for a %d-byte script", len(gz), len(js))
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, js) {
			t.Fatalf("decompressed body differs from the script (%v)", err)
		}
	}
	if _, b, gh := s.Do(t, http.MethodGet, m[1], "", nil, "Accept-Encoding", "gzip;q=0, identity"); gh.Get("Content-Encoding") != "" || !bytes.Equal(b, js) {
		t.Errorf("gzip;q=0 got Content-Encoding %q", gh.Get("Content-Encoding"))
	}
	for _, route := range []string{"/runs", "/projects/demo/features/a/b.feature", "/account?x=1"} {
		status, b, h := s.Do(t, http.MethodGet, route, "", nil)
		if status != http.StatusOK || string(b) != page || h.Get("Content-Security-Policy") != webui.CSP {
			t.Errorf("GET %s: %d, the page: %v", route, status, string(b) == page)
		}
	}
	for _, p := range []string{"/assets/missing-0000.js", "/api/no-such-thing"} {
		status, b, _ := s.Do(t, http.MethodGet, p, "", nil)
		var e struct {
			Error struct{ Code, Message, Hint string }
		}
		if status != http.StatusNotFound || json.Unmarshal(b, &e) != nil || e.Error.Code != "not_found" {
			t.Errorf("GET %s: %d %s", p, status, b)
		}
	}
	if status, b, h := s.Do(t, http.MethodHead, "/", "", nil); status != http.StatusOK || len(b) != 0 || h.Get("Content-Security-Policy") != webui.CSP {
		t.Errorf("HEAD /: %d, %d bytes", status, len(b))
	}
	// A method other than GET on a client route is still the API's answer, not the page.
	if status, _, _ := s.Do(t, http.MethodPost, "/runs", "application/json", []byte("{}")); status == http.StatusOK {
		t.Errorf("POST /runs: %d", status)
	}
}
