package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/httpkit"
)

// TestEveryLineOfARequestNamesIt: a line a handler logs with the request's context carries the
// request's id once, whether or not the line names it itself; a line outside a request does not.
func TestEveryLineOfARequestNamesIt(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogRequestID(slog.NewTextHandler(&buf, nil))).With("component", "test")
	h := httpkit.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.WarnContext(r.Context(), "from a handler", "n", 1)
		log.InfoContext(r.Context(), "named already", "request_id", RequestID(r.Context()))
	}))
	req := httptest.NewRequest("GET", "/x", nil)
	req.Header.Set("X-Request-Id", "abc-123")
	h.ServeHTTP(httptest.NewRecorder(), req)
	log.Info("outside a request")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines: %q", lines)
	}
	for _, l := range lines[:2] {
		if strings.Count(l, "request_id=abc-123") != 1 || !strings.Contains(l, "component=test") {
			t.Errorf("a request's line: %s", l)
		}
	}
	if strings.Contains(lines[2], "request_id") {
		t.Errorf("a line outside a request: %s", lines[2])
	}
}
