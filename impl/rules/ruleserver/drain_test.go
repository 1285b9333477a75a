package ruleserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const drainBody = `{"ruleset":"signup","data":{"account":{"email":"x"}},"ctx":{"today":"2025-06-15"}}`

// startDraining starts the binary on the signup fixture with the given drain flags and waits
// until it is ready.
func startDraining(t *testing.T, args ...string) *process {
	t.Helper()
	dir := rulesDir(t, "signup/signup.yaml")
	p := startProcess(t, []string{"RULE_SERVER_TOKEN=" + token, "RULE_SERVER_RULES_DIR=" + dir},
		append([]string{"-drain-timeout", "30s", "-log-level", "debug"}, args...)...)
	waitFor(t, "readiness", func() bool { return do(t, nil, "GET", p.URL+"/readyz", nil).Status == 200 })
	return p
}

// evaluationsStarted counts the evaluations in the access log of the server.
func evaluationsStarted(t *testing.T, p *process) int {
	n := 0
	for _, l := range logLines(t, p.stderr.String()) {
		if l["msg"] == "request" && l["path"] == "/evaluations" {
			n++
		}
	}
	return n
}

// halfSent opens n connections that send the headers and half the body of an evaluation.
func halfSent(t *testing.T, addr string, n int) []net.Conn {
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /evaluations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			token, len(drainBody), drainBody[:len(drainBody)/2])
		conns[i] = c
	}
	return conns
}

// finishHalfSent sends the rest of each body: every request must be answered 200 with
// Connection: close, as they end after the signal.
func finishHalfSent(t *testing.T, conns []net.Conn) {
	for i, c := range conns {
		if _, err := io.WriteString(c, drainBody[len(drainBody)/2:]); err != nil {
			t.Fatalf("in-flight request %d: %v", i, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("in-flight request %d dropped: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"findings"`)) || !resp.Close {
			t.Fatalf("in-flight request %d: %d, Connection: %q, %s", i, resp.StatusCode, resp.Header.Get("Connection"), b)
		}
	}
}

func waitDraining(t *testing.T, p *process) {
	waitFor(t, "readiness to turn off", func() bool {
		r := do(t, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, "GET", p.URL+"/readyz", nil)
		var rd struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(r.Body, &rd)
		return r.Status == 503 && rd.Status == "draining"
	})
}

// TestSIGTERMDrains sends SIGTERM while requests are in flight (bodies half uploaded) and while
// workers that retry nothing send evaluations on keep-alive connections; the load stops before
// the drain delay ends, as it does once a load balancer has taken the instance out. Not one
// request may fail: every answer is 200, those written after the signal carry Connection:
// close, and the server exits 0 having answered every evaluation it started.
func TestSIGTERMDrains(t *testing.T) {
	const delay, load = 4 * time.Second, 1500 * time.Millisecond // load stops well before the delay ends
	p := startDraining(t, "-drain-delay", delay.String())
	conns := halfSent(t, p.Addr, 6)

	var ok, closed atomic.Int64
	var failures sync.Map
	var nfail atomic.Int64
	var stopAt atomic.Int64 // unix nanoseconds; 0 until the signal is sent
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if at := stopAt.Load(); at != 0 && time.Now().UnixNano() > at {
					return
				}
				req, _ := http.NewRequest("POST", p.URL+"/evaluations", strings.NewReader(drainBody))
				req.GetBody = nil // the transport may not replay it: a failure must show
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					failures.Store(nfail.Add(1), err.Error())
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failures.Store(nfail.Add(1), resp.Status)
					continue
				}
				ok.Add(1)
				if resp.Close {
					closed.Add(1)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	stopAt.Store(time.Now().Add(load).UnixNano()) // the load goes on while the server drains
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitDraining(t, p)
	finishHalfSent(t, conns)
	wg.Wait()
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	if n := nfail.Load(); n != 0 {
		first, _ := failures.Load(int64(1))
		t.Fatalf("%d requests failed; the first: %v", n, first)
	}
	if closed.Load() == 0 {
		t.Fatal("no answer after the signal carried Connection: close")
	}
	if got, want := evaluationsStarted(t, p), int(ok.Load())+len(conns); got != want {
		t.Fatalf("the server started %d evaluations, clients got %d answers", got, want)
	}
	if !strings.Contains(p.stderr.String(), `"msg":"drained; exiting"`) {
		t.Fatalf("no drain line: %s", p.stderr.String())
	}
	t.Logf("%d evaluations answered under load (%d with Connection: close), %d in flight", ok.Load(), closed.Load(), len(conns))
}

// TestSIGTERMKeepAliveWithoutDelay drains with no delay: the listener closes at once, but no
// request on a connection that is open is lost. Busy keep-alive connections each get one more
// answer, with Connection: close; connections idle at the signal that send a request soon
// after are answered too; a connection left idle is closed after the idle grace; exit 0.
func TestSIGTERMKeepAliveWithoutDelay(t *testing.T) {
	p := startDraining(t, "-drain-delay", "0s")
	request := fmt.Sprintf("POST /evaluations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		token, len(drainBody), drainBody)
	exchange := func(c net.Conn, br *bufio.Reader) (*http.Response, error) {
		if _, err := io.WriteString(c, request); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, err
	}
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}

	// Idle connections: one request before the signal, one after it.
	const idle = 4
	type conn struct {
		c  net.Conn
		br *bufio.Reader
	}
	var idles []conn
	for i := 0; i < idle+1; i++ {
		c, br := dial()
		if resp, err := exchange(c, br); err != nil || resp.StatusCode != 200 || resp.Close {
			t.Fatalf("before the signal: %v %v", resp, err)
		}
		idles = append(idles, conn{c, br})
	}

	const busy = 12
	var wg sync.WaitGroup
	errs := make(chan error, busy+idle)
	var answered atomic.Int64
	for i := 0; i < busy; i++ {
		c, br := dial()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				resp, err := exchange(c, br)
				if err != nil {
					errs <- fmt.Errorf("busy connection: %w", err)
					return
				}
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("busy connection: %s", resp.Status)
					return
				}
				answered.Add(1)
				if resp.Close {
					return // the server said it closes: a client reconnects elsewhere
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // less than the idle grace
	for _, ic := range idles[:idle] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := exchange(ic.c, ic.br)
			if err != nil {
				errs <- fmt.Errorf("idle connection: %w", err)
				return
			}
			if resp.StatusCode != 200 || !resp.Close {
				errs <- fmt.Errorf("idle connection: %s, Connection: %q", resp.Status, resp.Header.Get("Connection"))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The last connection stays idle: the server closes it after the grace and exits.
	start := time.Now()
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	left := idles[idle]
	_ = left.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := left.br.ReadByte(); err == nil {
		t.Fatalf("the idle connection got %q instead of being closed", n)
	}
	t.Logf("%d answers on busy connections; exit %s after the idle connections' requests", answered.Load(), time.Since(start).Round(time.Millisecond))
}

// TestSIGTERMUnderWrk runs wrk (16 keep-alive connections, no retries) against the binary and
// sends SIGTERM in the middle of the run, with a drain delay longer than the rest of the run (a
// load balancer that has stopped sending by then):
// wrk must count no socket error and no answer other than 200, and the server exits 0.
func TestSIGTERMUnderWrk(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk is not installed (make deps installs it: apt-get install wrk)")
	}
	p := startDraining(t, "-drain-delay", "5s")
	script := filepath.Join(t.TempDir(), "post.lua")
	if err := os.WriteFile(script, []byte(wrkScript(drainBody, token)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wrk, "-t2", "-c16", "-d3s", "--timeout", "10s", "-s", script, p.URL+"/evaluations")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wrk: %v\n%s", err, out.String())
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	var got wrkCounts
	line := out.String()[strings.LastIndex(out.String(), "\n{")+1:]
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("wrk's summary: %v\n%s", err, out.String())
	}
	if got.Requests == 0 || got.OK != got.Requests || got.Other+got.Connect+got.Read+got.Write+got.Status+got.Timeout != 0 {
		t.Fatalf("failed requests: %+v\n%s", got, out.String())
	}
	if got.Closes < 16 {
		t.Fatalf("%d answers carried Connection: close, want one per connection at least: %+v", got.Closes, got)
	}
	if started := evaluationsStarted(t, p); started != got.Requests {
		// wrk counts the answers it read; one it did not read before its run ended was started
		// and answered by the server.
		if started < got.Requests || started > got.Requests+16 {
			t.Fatalf("the server started %d evaluations, wrk read %d answers", started, got.Requests)
		}
	}
	t.Logf("wrk: %+v", got)
}

// wrkCounts is what wrkScript's done() prints.
type wrkCounts struct {
	Requests, OK, Other, Closes           int
	Connect, Read, Write, Status, Timeout int
}

// wrkScript is a wrk script that posts body with the token, counts the answers by status and
// those carrying Connection: close, and prints the counts and wrk's errors as one JSON line.
func wrkScript(body, tok string) string {
	return fmt.Sprintf(`wrk.method = "POST"
wrk.body = %q
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok = 0; other = 0; closes = 0 end
function response(status, headers, body)
  if status == 200 then ok = ok + 1 else other = other + 1 end
  if headers["Connection"] == "close" then closes = closes + 1 end
end
function done(summary, latency, requests)
  local o, x, c = 0, 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); x = x + t:get("other"); c = c + t:get("closes") end
  local e = summary.errors
  io.write(string.format('\n{"requests":%%d,"ok":%%d,"other":%%d,"closes":%%d,"connect":%%d,"read":%%d,"write":%%d,"status":%%d,"timeout":%%d}\n',
    summary.requests, o, x, c, e.connect, e.read, e.write, e.status, e.timeout))
end
`, body, tok)
}
