package app_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestWebUIInsightsAndSchedules drives the insights and schedules pages in Chromium
// (web/e2e/insights.mjs) against a real server whose project "shop" has a flaky history ingested
// through the API: the history of TestStatsOverCraftedHistory (statsHistory), one run a day ending
// yesterday, plus one run in the previous 30-day window.
func TestWebUIInsightsAndSchedules(t *testing.T) {
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
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "stats:read", "schedules:read")
	bearer := s.Bearer(t, token)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	at := func(i int) time.Time {
		if i == 0 {
			return today.Add(-45 * 24 * time.Hour).Add(10 * time.Hour)
		}
		return today.Add(time.Duration(i-len(statsHistory)) * 24 * time.Hour).Add(10 * time.Hour)
	}
	for i := range statsHistory {
		id := ingestRun(t, bearer)
		if status, _, body := ingestDoc(t, s, token, id, "application/xml", statsDoc(i, at(i))); status != http.StatusOK {
			t.Fatalf("ingest run %d: %d %s", i, status, body)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("e2e", "insights.mjs"))
	cmd.Dir = webDir
	cmd.Env = append(os.Environ(), "SDODS_URL="+s.URL, "SDODS_CHROMIUM="+chromium, "SDODS_E2E_ARTIFACTS="+t.TempDir(),
		"SDODS_E2E_PASSWORD="+apptest.AdminPassword, "SDODS_E2E_TOKEN="+token)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Logf("server log:\n%s", s.Logs())
		t.Fatalf("web/e2e/insights.mjs: %v", err)
	}
}
