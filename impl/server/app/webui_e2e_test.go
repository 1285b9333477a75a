package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/app/apptest"
)

// webDir is the web UI's package (web/ at the repository root), relative to this package.
var webDir = filepath.Join("..", "..", "..", "web")

// TestWebUIEndToEnd is issue 25 item 8: web/e2e/run.mjs drives the system Chromium with
// playwright-core against this real server on its own PostgreSQL database: first-run setup, a
// feature with a deliberate error marked at its line, a run followed live to its end, a token
// created in the UI and used from outside, a failed visual check accepted, a viewer without write actions, axe-core on every
// page. SDODS_UI_SCREENSHOTS=<dir> makes it refresh the screenshots of docs/ui (make ui-screenshots).
func TestWebUIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed for the web UI's end-to-end test (Node.js 20 or later)")
	}
	chromium := findChromium(t)
	ensureWebModules(t)
	s := apptest.Start(t)
	// The application the visual check captures: POST /flip changes its button's colour, so that
	// the second capture differs from the baseline the first made.
	var mu sync.Mutex
	colour := "#2563eb"
	mux := http.NewServeMux()
	mux.HandleFunc("POST /flip", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		colour = "#dc2626"
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c := colour
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:20px;font-family:sans-serif">
<h1>Checkout</h1><button style="background:%s;color:#fff;border:0;border-radius:6px;padding:10px 18px">Pay</button></body></html>`, c)
	})
	target := httptest.NewServer(mux)
	t.Cleanup(target.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("e2e", "run.mjs"))
	cmd.Dir = webDir
	cmd.Env = append(os.Environ(), "SDODS_URL="+s.URL, "SDODS_E2E_TARGET="+target.URL, "SDODS_CHROMIUM="+chromium, "SDODS_E2E_ARTIFACTS="+t.TempDir())
	if dir := os.Getenv("SDODS_UI_SCREENSHOTS"); dir != "" {
		cmd.Env = append(cmd.Env, "SDODS_UI_SCREENSHOTS="+dir)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Logf("server log:\n%s", s.Logs())
		t.Fatalf("web/e2e/run.mjs: %v", err)
	}
}

func findChromium(t testing.TB) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is missing: make deps installs it")
	return ""
}

// ensureWebModules installs web/'s packages from its lock file when they are missing (make test
// does it first; this keeps go test ./impl/server/app working alone).
func ensureWebModules(t testing.TB) {
	if _, err := os.Stat(filepath.Join(webDir, "node_modules", "playwright-core")); err == nil {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = webDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in web: %v\n%s", err, out)
	}
}
