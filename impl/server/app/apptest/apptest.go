// Package apptest starts the real test automation server for black-box tests: the wired
// application on a fresh PostgreSQL database behind a real HTTP listener, and a generated client.
package apptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// Server is a running server under test.
type Server struct {
	// Stop ends the server's run workers; calling it again does nothing more.
	Stop        func()
	URL         string
	DatabaseURL string
	DataDir     string
	App         *app.App
	Client      *serverclient.ClientWithResponses
	logs        *syncBuffer
}

// Start wires the application on a new database, serves it and closes both when tb ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartOn(tb, storetest.NewDatabase(tb), nil)
}

// StartOn starts another server process on an existing database (for tests of several
// processes sharing one database); tune, when given, adjusts the configuration first.
func StartOn(tb testing.TB, dbURL string, tune func(*app.Config)) *Server {
	tb.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dataDir := tb.TempDir()
	cfg := app.Config{Addr: "127.0.0.1:0", DatabaseURL: dbURL, DataDir: dataDir, MaxBody: 1 << 20, LogFormat: "text", GitAllowLocal: true, WebhookAllowPrivate: true,
		Workers: 2, Chromium: "chromium", RunHeartbeat: 500 * time.Millisecond, RunStaleAfter: 5 * time.Second,
		// The applications tests run against listen on loopback, which the egress policy denies
		// by default: allowed here explicitly, as an operator does for local development. The
		// server's own listener and its database stay denied (more specific built-ins).
		EgressAllow: LoopbackEgress}
	if tune != nil {
		tune(&cfg)
	}
	a, err := app.New(context.Background(), cfg, log)
	if err != nil {
		tb.Fatalf("start app: %v", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	wait := a.Start(ctx)
	ts := httptest.NewServer(a.Handler)
	a.DenyListener(ts.Listener.Addr())
	s := &Server{DatabaseURL: dbURL, DataDir: dataDir, App: a, logs: logs}
	s.Stop = func() {
		stop()
		wait()
	}
	tb.Cleanup(func() {
		ts.Close()
		s.Stop()
		a.Close()
	})
	c, err := serverclient.NewClientWithResponses(ts.URL)
	if err != nil {
		tb.Fatalf("client: %v", err)
	}
	s.URL, s.Client = ts.URL, c
	return s
}

// The sdods command the tests that run it as processes share, built once per test binary.
var sdodsBin struct {
	once      sync.Once
	dir, path string
	err       error
}

// SdodsBinary builds cmd/sdods once for the whole test binary and returns its path; the package's
// TestMain calls RemoveBinaries when its tests are done.
func SdodsBinary(tb testing.TB) string {
	tb.Helper()
	sdodsBin.once.Do(func() {
		if sdodsBin.dir, sdodsBin.err = os.MkdirTemp("", "sdods-apptest-"); sdodsBin.err != nil {
			return
		}
		sdodsBin.path = filepath.Join(sdodsBin.dir, "sdods")
		build := exec.Command("go", "build", "-o", sdodsBin.path, "github.com/sdods/sdods/cmd/sdods")
		build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
		if out, err := build.CombinedOutput(); err != nil {
			sdodsBin.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if sdodsBin.err != nil {
		tb.Fatalf("build sdods: %v", sdodsBin.err)
	}
	return sdodsBin.path
}

// RemoveBinaries removes what SdodsBinary built (call it from TestMain after m.Run).
func RemoveBinaries() {
	if sdodsBin.dir != "" {
		_ = os.RemoveAll(sdodsBin.dir)
	}
}

// LoopbackEgress is the egress allow-list of the servers Start starts: loopback, where the tests'
// applications listen.
var LoopbackEgress = []string{"127.0.0.0/8", "::1"}

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

// DiscardLogs drops what the server logs from now on (Logs keeps what came before). For
// benchmarks: a buffer that grows by a line per request copies itself, lock held, each time it
// doubles — a pause of tens of milliseconds per doubling once it holds a hundred megabytes,
// which would show as the server's latency.
func (s *Server) DiscardLogs() { s.logs.discard() }

type syncBuffer struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	dropping bool
}

func (b *syncBuffer) discard() {
	b.mu.Lock()
	b.dropping = true
	b.mu.Unlock()
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropping {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Browser is a client with a cookie jar that sends the CSRF token of its session, as the web UI does.
type Browser struct {
	*serverclient.ClientWithResponses
	CSRF string
	Jar  http.CookieJar
}

// NewBrowser returns a client with an empty cookie jar.
func (s *Server) NewBrowser(tb testing.TB) *Browser {
	tb.Helper()
	jar, _ := cookiejar.New(nil)
	b := &Browser{Jar: jar}
	hc := &http.Client{Jar: jar}
	c, err := serverclient.NewClientWithResponses(s.URL, serverclient.WithHTTPClient(hc),
		serverclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			if b.CSRF != "" && req.Method != http.MethodGet {
				req.Header.Set("x-csrf-token", b.CSRF)
			}
			return nil
		}))
	if err != nil {
		tb.Fatal(err)
	}
	b.ClientWithResponses = c
	return b
}

// Bearer returns a client that sends an API token.
func (s *Server) Bearer(tb testing.TB, token string) *serverclient.ClientWithResponses {
	tb.Helper()
	c, err := serverclient.NewClientWithResponses(s.URL, serverclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// AdminPassword is the password of the administrator Setup creates.
const AdminPassword = "correct horse battery staple"

// Setup creates the first administrator (admin@example.com) and returns their signed-in browser.
func (s *Server) Setup(tb testing.TB) *Browser {
	tb.Helper()
	b := s.NewBrowser(tb)
	resp, err := b.SetupWithResponse(context.Background(), serverclient.SetupJSONRequestBody{Email: "admin@example.com", Password: AdminPassword, DisplayName: "Admin"})
	if err != nil || resp.StatusCode() != http.StatusCreated {
		tb.Fatalf("setup: %v %s", err, bodyOf(resp))
	}
	b.CSRF = *resp.JSON201.CsrfToken
	return b
}

// SignIn creates a user (through the admin browser) and returns that user's signed-in browser.
func (s *Server) SignIn(tb testing.TB, admin *Browser, email string) (*Browser, serverclient.User) {
	tb.Helper()
	ctx := context.Background()
	const pw = "a long enough password"
	cu, err := admin.CreateUserWithResponse(ctx, serverclient.CreateUserJSONRequestBody{Email: openapi_types.Email(email), DisplayName: email, Password: pw})
	if err != nil || cu.StatusCode() != http.StatusCreated {
		tb.Fatalf("create user %s: %v %s", email, err, bodyOf(cu))
	}
	b := s.NewBrowser(tb)
	lr, err := b.LoginWithResponse(ctx, serverclient.LoginJSONRequestBody{Email: openapi_types.Email(email), Password: pw})
	if err != nil || lr.StatusCode() != http.StatusOK {
		tb.Fatalf("login %s: %v %s", email, err, bodyOf(lr))
	}
	b.CSRF = *lr.JSON200.CsrfToken
	return b, *cu.JSON201
}

// Token creates an API token with scopes through a browser and returns it.
func Token(tb testing.TB, b *Browser, scopes ...string) string {
	tb.Helper()
	sc := make([]serverclient.Scope, len(scopes))
	for i, s := range scopes {
		sc[i] = serverclient.Scope(s)
	}
	resp, err := b.CreateTokenWithResponse(context.Background(), serverclient.CreateTokenJSONRequestBody{Name: "test", Scopes: sc})
	if err != nil || resp.StatusCode() != http.StatusCreated {
		tb.Fatalf("create token: %v %s", err, bodyOf(resp))
	}
	return resp.JSON201.Token
}

// bodyOf describes a generated response for a failure message.
func bodyOf(r any) string {
	switch v := r.(type) {
	case *serverclient.SetupResponse:
		if v != nil {
			return fmt.Sprintf("%d %s", v.StatusCode(), v.Body)
		}
	case *serverclient.LoginResponse:
		if v != nil {
			return fmt.Sprintf("%d %s", v.StatusCode(), v.Body)
		}
	case *serverclient.CreateUserResponse:
		if v != nil {
			return fmt.Sprintf("%d %s", v.StatusCode(), v.Body)
		}
	case *serverclient.CreateTokenResponse:
		if v != nil {
			return fmt.Sprintf("%d %s", v.StatusCode(), v.Body)
		}
	}
	return "<no response>"
}
