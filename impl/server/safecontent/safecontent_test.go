package safecontent_test

import (
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/safecontent"
)

func TestMediaType(t *testing.T) {
	for _, c := range []struct{ raw, want, kind string }{
		{"image/png", "image/png", "screenshot"},
		{"IMAGE/PNG; foo=bar", "image/png", "screenshot"},
		{"image/jpg", "image/jpeg", "screenshot"},
		{"video/webm", "video/webm", "video"},
		{"application/json; charset=utf-8", "application/json", "other"},
		{"application/problem+json", "application/json", "other"},
		{"text/plain; charset=iso-8859-1", "text/plain", "log"},
		{"text/html", "text/plain", "dom"},
		{"application/xhtml+xml", "text/plain", "dom"},
		{"image/svg+xml", "text/plain", "log"},
		{"application/xml", "text/plain", "log"},
		{"text/x-anything", "text/plain", "log"},
		{"video/x,text/html", safecontent.OctetStream, "other"},
		{"video/mp4, text/html", safecontent.OctetStream, "other"},
		{"text/html;charset=utf-8, video/mp4", safecontent.OctetStream, "other"},
		{"video/x-unknown", safecontent.OctetStream, "other"},
		{"application/pdf", safecontent.OctetStream, "other"},
		{"application/javascript", "text/plain", "log"},
		{"", safecontent.OctetStream, "other"},
		{"html", safecontent.OctetStream, "other"},
	} {
		t.Run(c.raw, func(t *testing.T) {
			got := safecontent.MediaType(c.raw)
			if got != c.want || safecontent.MediaType(got) != got {
				t.Fatalf("MediaType(%q) = %q, want %q (and idempotent)", c.raw, got, c.want)
			}
			if k := safecontent.Kind(c.raw, "f"); k != c.kind {
				t.Fatalf("Kind(%q) = %q, want %q", c.raw, k, c.kind)
			}
			if ct := safecontent.ContentType(c.raw); strings.Contains(ct, "html") || strings.Contains(ct, "xml") || strings.Contains(ct, ",") {
				t.Fatalf("ContentType(%q) = %q", c.raw, ct)
			}
		})
	}
}

func TestPageCSP(t *testing.T) {
	csp := safecontent.PageCSP("<style>a{}</style><script>run()</script>", "img-src data:")
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-", "style-src 'sha256-", "img-src data:", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Fatalf("%q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Fatalf("%q", csp)
	}
}
