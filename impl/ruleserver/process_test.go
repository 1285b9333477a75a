package ruleserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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

// TestSIGTERMDrains sends SIGTERM while requests are in flight (bodies half uploaded) and under
// load: readiness turns off, every in-flight request is answered 200, every request the server
// started is answered, and the process exits 0.
func TestSIGTERMDrains(t *testing.T) {
	dir := rulesDir(t, "signup/signup.yaml")
	p := startProcess(t, []string{"RULE_SERVER_TOKEN=" + token, "RULE_SERVER_RULES_DIR=" + dir},
		"-drain-delay", "3s", "-drain-timeout", "30s", "-log-level", "debug")
	waitFor(t, "readiness", func() bool { return do(t, nil, "GET", p.URL+"/readyz", nil).Status == 200 })

	body := `{"ruleset":"signup","data":{"account":{"email":"x"}},"ctx":{"today":"2025-06-15"}}`
	// In flight: the headers and half the body are sent before SIGTERM.
	const inflight = 6
	conns := make([]net.Conn, inflight)
	for i := range conns {
		c, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /evaluations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			token, len(body), body[:len(body)/2])
		conns[i] = c
	}

	// Load: workers send requests until the server stops accepting connections.
	var ok, bad, dialRefused atomic.Int64
	var firstBad atomic.Value
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				req, _ := http.NewRequest("POST", p.URL+"/evaluations", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					var op *net.OpError
					if errors.As(err, &op) && op.Op == "dial" {
						dialRefused.Add(1)
						return // the listener is closed: the drain has begun
					}
					// The connection was closed while idle, before this request was read; the
					// server never started it (checked below by counting).
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					ok.Add(1)
				} else {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, resp.StatusCode)
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // let the load run before the signal
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "readiness to turn off", func() bool {
		r := do(t, nil, "GET", p.URL+"/readyz", nil)
		var rd struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(r.Body, &rd)
		return r.Status == 503 && rd.Status == "draining"
	})
	if resp, err := http.Get(p.URL + "/livez"); err != nil || resp.StatusCode != 200 || !resp.Close {
		t.Fatalf("while draining, answers must close keep-alive connections: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Finish the in-flight uploads: each must be answered 200.
	for i, c := range conns {
		if _, err := io.WriteString(c, body[len(body)/2:]); err != nil {
			t.Fatalf("in-flight request %d: %v", i, err)
		}
		resp, err := http.ReadResponse(bufioReader(c), nil)
		if err != nil {
			t.Fatalf("in-flight request %d dropped: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"findings"`)) {
			t.Fatalf("in-flight request %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d answers were not 200 (first %v)", bad.Load(), firstBad.Load())
	}
	// Every evaluation the server started was answered: its access log counts them.
	started := 0
	for _, l := range logLines(t, p.stderr.String()) {
		if l["msg"] == "request" && l["path"] == "/evaluations" {
			started++
		}
	}
	if want := int(ok.Load()) + inflight; started != want {
		t.Fatalf("the server started %d evaluations, clients got %d answers", started, want)
	}
	if !strings.Contains(p.stderr.String(), `"msg":"drained; exiting"`) {
		t.Fatalf("no drain line: %s", p.stderr.String())
	}
	t.Logf("%d evaluations under load and %d in flight answered; %d workers stopped on the closed listener", ok.Load(), inflight, dialRefused.Load())
}
