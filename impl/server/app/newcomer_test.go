package app_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// buildSdods returns cmd/sdods, built once for every test that runs it (apptest.SdodsBinary).
func buildSdods(t *testing.T) string {
	t.Helper()
	return apptest.SdodsBinary(t)
}

// sdods runs the binary to completion with extra environment variables.
func sdods(t *testing.T, bin string, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// unusedDatabase returns the URL of a database that does not exist yet on the test server, dropped
// when t ends.
func unusedDatabase(t *testing.T) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "sdods_new_" + hex.EncodeToString(b[:])
	u, err := url.Parse(storetest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), storetest.AdminURL())
		if err == nil {
			_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			conn.Close(context.Background())
		}
	})
	return u.String()
}

// serveUntilReady starts sdods serve and returns what it printed up to its "API:" line.
func serveUntilReady(t *testing.T, bin string, args ...string) (string, func()) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = cmd.Process.Signal(syscall.SIGTERM); _, _ = cmd.Process.Wait() }
	t.Cleanup(stop)
	var b strings.Builder
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("sdods serve stopped:\n%s", b.String())
			}
			b.WriteString(l + "\n")
			if strings.HasPrefix(l, "API:") {
				go func() {
					for range lines {
					}
				}()
				return b.String(), stop
			}
		case <-timeout:
			t.Fatalf("sdods serve printed no API line:\n%s", b.String())
		}
	}
}

// TestNewcomerStart is issue 18 items 13, 15 and 17 as a newcomer meets them: sdods serve says
// what it did (database created or found, migrations applied, setup needed and the command that
// does it) and where the web UI is; help works for the command and its subcommands; the token
// command reaches the database it is given without migrating it; bad configuration from the
// environment stops the start.
func TestNewcomerStart(t *testing.T) {
	bin := buildSdods(t)
	dbURL := unusedDatabase(t)
	addr := freeAddr(t)
	base := "http://" + addr
	args := []string{"-addr", addr, "-database-url", dbURL, "-data-dir", t.TempDir(), "--create-db"}

	out, stop := serveUntilReady(t, bin, args...)
	for _, want := range []string{"(created now)", "migrations: applied 0 → ", "setup:      needed",
		"curl -X POST " + base + "/api/auth/setup -H 'Content-Type: application/json'", "web UI:     " + base + "/ (open it in a browser to create the first administrator)",
		"API:        " + base + "/api (health: " + base + "/api/health)"} {
		if !strings.Contains(out, want) {
			t.Errorf("first start: %q missing from\n%s", want, out)
		}
	}
	// The printed command works as printed (its body is on the next line).
	resp, err := http.Post(base+"/api/auth/setup", "application/json", strings.NewReader(`{"email":"admin@example.com","password":"choose a long password","displayName":"Admin"}`))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("setup as printed: %v %v", err, resp)
	}
	resp.Body.Close()
	if !strings.Contains(out, `-d '{"email":"admin@example.com","password":"choose a long password","displayName":"Admin"}'`) {
		t.Errorf("the setup body printed is not the one that works:\n%s", out)
	}
	stop()
	out, stop = serveUntilReady(t, bin, args...)
	for _, want := range []string{"(existing)", "migrations: up to date (version ", "setup:      done"} {
		if !strings.Contains(out, want) {
			t.Errorf("second start: %q missing from\n%s", want, out)
		}
	}
	stop()

	// Help.
	if got, err := sdods(t, bin, nil, "-h"); err != nil || !strings.Contains(got, "usage: sdods <command>") || strings.Contains(got, "unknown command") {
		t.Errorf("sdods -h: %v\n%s", err, got)
	}
	got, err := sdods(t, bin, nil, "token", "-h")
	if err != nil || !strings.Contains(got, "-user") || !strings.Contains(got, "-database-url") || strings.Contains(got, "-max-body") {
		t.Errorf("sdods token -h: %v\n%s", err, got)
	}

	// The token command: the server's database by flag or DATABASE_URL; never migrates another.
	if got, err := sdods(t, bin, nil, "token", "create", "--database-url", dbURL, "--user", "admin@example.com", "--scopes", "runs:read", "--name", "ci"); err != nil || !strings.HasPrefix(got, "sdods_") && len(strings.TrimSpace(got)) < 20 {
		t.Errorf("token create --database-url: %v\n%s", err, got)
	}
	if got, err := sdods(t, bin, []string{"DATABASE_URL=" + dbURL}, "token", "create", "--user", "admin@example.com", "--scopes", "runs:read", "--name", "ci2"); err != nil {
		t.Errorf("token create with DATABASE_URL: %v\n%s", err, got)
	}
	empty := unusedDatabase(t)
	conn, err := pgx.Connect(context.Background(), storetest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), "CREATE DATABASE "+strings.TrimPrefix(mustURL(t, empty).Path, "/")); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	if got, err := sdods(t, bin, nil, "token", "create", "--database-url", empty, "--user", "admin@example.com", "--scopes", "runs:read", "--name", "ci"); err == nil || !strings.Contains(got, "has no sdods schema") {
		t.Errorf("token create on another database: %v\n%s", err, got)
	}
	other, err := pgx.Connect(context.Background(), empty)
	if err != nil {
		t.Fatal(err)
	}
	var tables int
	_ = other.QueryRow(context.Background(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'").Scan(&tables)
	other.Close(context.Background())
	if tables != 0 {
		t.Errorf("token create migrated the database it was wrongly given: %d tables", tables)
	}

	// Bad configuration from the environment is a start-up error naming the variable.
	for _, env := range []string{"SDODS_WORKERS=two", "SDODS_CREATE_DB=yes", "SDODS_MAX_BODY=1MB", "SDODS_LOG_LEVEL=loud", "SDODS_WORKERS=-1"} {
		got, err := sdods(t, bin, []string{env}, "serve", "-addr", freeAddr(t), "-database-url", dbURL, "-data-dir", t.TempDir())
		name, _, _ := strings.Cut(env, "=")
		if err == nil || !strings.Contains(got, name) {
			t.Errorf("%s: %v\n%s", env, err, got)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestReadOnlyPostsNeedNoAuditEntry is issue 18 item 17: validate, lint and a recording not saved
// change nothing, and the server no longer logs an error for their missing audit entry.
func TestReadOnlyPostsNeedNoAuditEntry(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "features:read", "features:write")
	auth := []string{"Authorization", "Bearer " + token}
	for _, c := range []struct{ path, body string }{
		{"/api/projects/shop/features/validate", `{"path":"a.feature","content":"Feature: A\n  Scenario: B\n    Given I wait 1 second\n"}`},
		{"/api/projects/shop/lint", `{}`},
		{"/api/projects/shop/record", `{"format":"actions","name":"Sign in","actions":[{"type":"navigate","url":"http://127.0.0.1:9/"}]}`},
	} {
		if status, body, _ := s.Do(t, "POST", c.path, "application/json", []byte(c.body), auth...); status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.path, status, body)
		}
	}
	if strings.Contains(s.Logs(), "recorded no audit entry") {
		t.Fatalf("a read-only POST was reported unaudited:\n%s", errorLines(s.Logs()))
	}
}
