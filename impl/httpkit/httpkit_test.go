package httpkit_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/httpkit"
)

func TestRequestIDAdoptedOrMade(t *testing.T) {
	t.Parallel()
	var seen string
	h := httpkit.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = httpkit.RequestID(r.Context()) }))
	for name, tc := range map[string]struct{ in, want string }{
		"well-formed": {in: "abc-123.X_y", want: "abc-123.X_y"},
		"unsafe":      {in: "a b\nc", want: ""},
		"too long":    {in: strings.Repeat("a", 65), want: ""},
		"absent":      {in: "", want: ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.in != "" {
				r.Header.Set("X-Request-Id", tc.in)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			echoed := w.Header().Get("X-Request-Id")
			if echoed != seen || seen == "" {
				t.Fatalf("echoed %q, context %q", echoed, seen)
			}
			if tc.want != "" && seen != tc.want {
				t.Fatalf("id %q, want %q", seen, tc.want)
			}
			if tc.want == "" && (seen == tc.in || len(seen) != 16) {
				t.Fatalf("id %q: want a new 16-digit id", seen)
			}
		})
	}
}

func TestRecoveryLogsAndAnswers(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	var answered error
	h := httpkit.Recovery(log, func(r *http.Request) []any { return []any{"path", r.URL.Path} },
		func(w http.ResponseWriter, r *http.Request, err error) {
			answered = err
			w.WriteHeader(http.StatusInternalServerError)
		})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/x", nil))
	if w.Code != http.StatusInternalServerError || answered == nil || !strings.Contains(answered.Error(), "boom") {
		t.Fatalf("status %d, answered %v", w.Code, answered)
	}
	for _, want := range []string{`"msg":"panic"`, `"path":"/x"`, `"panic":"boom"`, `"stack":"goroutine`} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("log lacks %s: %s", want, logs.String())
		}
	}
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Fatalf("ErrAbortHandler not passed on: %v", v)
		}
	}()
	httpkit.Recovery(log, func(*http.Request) []any { return nil }, func(http.ResponseWriter, *http.Request, error) { t.Error("answered an abort") })(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		}
	})
	refused := false
	limit := httpkit.BodyLimit{Limit: 4, Refuse: func(w http.ResponseWriter, r *http.Request) { refused = true; w.WriteHeader(http.StatusTeapot) }}
	cases := []struct {
		name   string
		body   string
		length int64
		want   int
	}{
		{"under", "abcd", 4, http.StatusOK},
		{"declared over", "abcde", 5, http.StatusTeapot},
		{"undeclared over", "abcde", -1, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
		r.ContentLength = tc.length
		w := httptest.NewRecorder()
		limit.Middleware(read).ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, w.Code, tc.want)
		}
	}
	if !refused {
		t.Error("Refuse never called")
	}
}

func TestAccessLogAndRecorder(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var got *httpkit.StatusRecorder
	attrs := func(r *http.Request, rec *httpkit.StatusRecorder, d time.Duration) []any {
		got = rec
		return []any{"path", r.URL.Path, "status", rec.Status(), "bytes", rec.Bytes()}
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		w.WriteHeader(http.StatusOK) // the first status counts
		_, _ = w.Write([]byte("hello"))
		http.NewResponseController(w).Flush()
	})
	w := httptest.NewRecorder()
	httpkit.AccessLog(log, slog.LevelInfo, attrs)(h).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/p?secret=1", nil))
	if got == nil || got.Status() != http.StatusCreated || got.Bytes() != 5 || !w.Flushed {
		t.Fatalf("recorder %+v, flushed %v", got, w.Flushed)
	}
	if !strings.Contains(logs.String(), `"path":"/p","status":201,"bytes":5`) || strings.Contains(logs.String(), "secret") {
		t.Fatalf("log: %s", logs.String())
	}
	// Below the logger's level nothing is recorded nor logged.
	logs.Reset()
	got = nil
	httpkit.AccessLog(log, slog.LevelDebug, attrs)(h).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if got != nil || logs.Len() != 0 {
		t.Fatalf("logged below the level: %s", logs.String())
	}
}
