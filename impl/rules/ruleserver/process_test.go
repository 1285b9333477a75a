package ruleserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// logLines decodes the JSON log lines of stderr.
func logLines(t testing.TB, stderr string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func TestStartRefusedWithoutToken(t *testing.T) {
	bin := ruleserverBinary(t)
	dir := t.TempDir()
	// A broken ruleset: had the server loaded it, the log would say so.
	writeAtomic(t, filepath.Join(dir, "broken.yaml"), []byte("ruleset: [this is not a ruleset\n"))
	cases := []struct {
		name string
		env  []string
		says string
	}{
		{"no token", nil, "RULE_SERVER_TOKEN is not set"},
		{"empty token", []string{"RULE_SERVER_TOKEN="}, "RULE_SERVER_TOKEN is not set"},
		{"allow-open other than 1", []string{"RULE_SERVER_ALLOW_OPEN=true"}, "only 1 opens the server"},
		{"allow-open 0", []string{"RULE_SERVER_ALLOW_OPEN=0"}, "RULE_SERVER_TOKEN is not set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-rules", dir)
			cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, c.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit %v, want status 1; stderr %s", err, stderr.String())
			}
			lines := logLines(t, stderr.String())
			if len(lines) != 1 || lines[0]["level"] != "FATAL" || !strings.Contains(fmt.Sprint(lines[0]["msg"]), c.says) {
				t.Fatalf("want one FATAL line saying %q, got %s", c.says, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout %q", stdout.String())
			}
		})
	}
}

func TestAllowOpen(t *testing.T) {
	dir := rulesDir(t, "signup/signup.yaml")
	p := startProcess(t, []string{"RULE_SERVER_ALLOW_OPEN=1", "RULE_SERVER_RULES_DIR=" + dir})
	waitFor(t, "readiness", func() bool { return do(t, nil, "GET", p.URL+"/readyz", nil).Status == 200 })
	warned := false
	for _, l := range logLines(t, p.stderr.String()) {
		if l["level"] == "WARN" && strings.Contains(fmt.Sprint(l["msg"]), "private networks only") {
			warned = true
		}
	}
	if !warned {
		t.Fatalf("no warning: %s", p.stderr.String())
	}
	for _, path := range []string{"/rulesets", "/rulesets/signup/bundle", "/rulesets/signup/manifest?channel=server"} {
		if r := do(t, nil, "GET", p.URL+path, nil); r.Status != 200 {
			t.Fatalf("%s without a token in open mode: %d %s", path, r.Status, r.Body)
		}
	}
	if r := do(t, nil, "POST", p.URL+"/evaluations", []byte(`{"ruleset":"signup","data":{}}`)); r.Status != 200 {
		t.Fatalf("evaluation in open mode: %d %s", r.Status, r.Body)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestSIGHUPReloads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "signup.yaml")
	writeAtomic(t, file, signupVersion(t, "1.0.0"))
	p := startProcess(t, []string{"RULE_SERVER_TOKEN=" + token, "RULE_SERVER_RULES_DIR=" + dir}, "-poll", "0")
	waitFor(t, "readiness", func() bool { return do(t, nil, "GET", p.URL+"/readyz", nil).Status == 200 })

	writeAtomic(t, file, brokenSignup(t))
	_ = p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, "the refused reload", func() bool {
		_, r := readiness(t, p.URL)
		return r.LastReload != nil && !r.LastReload.Ok
	})
	if v := listedVersion(t, p.URL, "signup"); v != "1.0.0" {
		t.Fatalf("serving %q after a refused reload", v)
	}
	if !strings.Contains(p.stderr.String(), `"msg":"ruleset refused"`) {
		t.Fatalf("the refusal is not logged: %s", p.stderr.String())
	}

	writeAtomic(t, file, signupVersion(t, "2.0.0"))
	if v := listedVersion(t, p.URL, "signup"); v != "1.0.0" { // polling is off: nothing happens without SIGHUP
		t.Fatalf("reloaded without SIGHUP: %q", v)
	}
	_ = p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, "version 2.0.0", func() bool { return listedVersion(t, p.URL, "signup") == "2.0.0" })
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
