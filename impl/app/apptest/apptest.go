// Package apptest starts the real test automation server for black-box tests: the wired
// application on a fresh PostgreSQL database behind a real HTTP listener, and a generated client.
package apptest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/app"
	"github.com/sdods/sdods/impl/store/storetest"
)

// Server is a running server under test.
type Server struct {
	URL    string
	App    *app.App
	Client *serverclient.ClientWithResponses
	logs   *syncBuffer
}

// Start wires the application on a new database, serves it and closes both when tb ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	dbURL := storetest.NewDatabase(tb)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := app.Config{Addr: "127.0.0.1:0", DatabaseURL: dbURL, DataDir: tb.TempDir(), MaxBody: 1 << 20, LogFormat: "text"}
	a, err := app.New(context.Background(), cfg, log)
	if err != nil {
		tb.Fatalf("start app: %v", err)
	}
	ts := httptest.NewServer(a.Handler)
	tb.Cleanup(func() {
		ts.Close()
		a.Close()
	})
	c, err := serverclient.NewClientWithResponses(ts.URL)
	if err != nil {
		tb.Fatalf("client: %v", err)
	}
	return &Server{URL: ts.URL, App: a, Client: c, logs: logs}
}

// Logs returns everything the server logged so far.
func (s *Server) Logs() string { return s.logs.String() }

// Do sends a raw request (for inputs the typed client cannot express) and returns the status and body.
func (s *Server) Do(tb testing.TB, method, path, contentType string, body []byte, header ...string) (int, []byte, http.Header) {
	tb.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
