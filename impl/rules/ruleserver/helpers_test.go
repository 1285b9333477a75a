package ruleserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/rules/ruleserver"
)

const token = "test-token-0123456789"

var fixtures = filepath.Join("..", "..", "..", "conformance", "fixtures")

// rulesDir returns a fresh directory holding the given fixture files (fixture/file).
func rulesDir(t testing.TB, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(fixtures, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeAtomic replaces a file the way a deployment tool does: a temporary file and a rename.
func writeAtomic(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// server is a rule server running in this process on a real loopback listener.
type server struct {
	URL  string
	Addr string
	Logs *syncBuffer
	stop context.CancelFunc
	done chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer runs ruleserver.Run with c (Listener, RulesDir and defaults filled in) until the
// test ends, and waits until it is ready.
func startServer(t testing.TB, c ruleserver.Config) *server {
	t.Helper()
	if typeScriptServer() {
		return startTypeScriptServer(t, c)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.Listener = ln
	if c.MaxBody == 0 {
		c.MaxBody = ruleserver.DefaultMaxBody
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 10 * time.Second
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{URL: "http://" + ln.Addr().String(), Addr: ln.Addr().String(), Logs: logs, stop: cancel, done: make(chan error, 1)}
	go func() { s.done <- ruleserver.Run(ctx, c, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-s.done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	client := &http.Client{Timeout: 2 * time.Second}
	waitFor(t, "the first load", func() bool {
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("Run returned before serving: %v", err)
		default:
		}
		resp, err := client.Get(s.URL + "/readyz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var r struct {
			LastReload *struct{} `json:"lastReload"`
		}
		return json.NewDecoder(resp.Body).Decode(&r) == nil && r.LastReload != nil
	})
	return s
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// errorCode returns the code of an error body, or "" when the body is not one.
func (r response) errorCode() string {
	var e struct {
		Error struct {
			Code    string  `json:"code"`
			Message *string `json:"message"`
			Hint    *string `json:"hint"`
		} `json:"error"`
	}
	if json.Unmarshal(r.Body, &e) != nil || e.Error.Message == nil || e.Error.Hint == nil {
		return ""
	}
	return e.Error.Code
}

func do(t testing.TB, c *http.Client, method, url string, body []byte, header ...string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func auth() []string { return []string{"Authorization", "Bearer " + token} }

// rawRequest sends text on a new connection and returns the status line and the body.
func rawRequest(t testing.TB, addr, text string) response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, text); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// binary is the ruleserver command built once for the tests that run it as a process.
var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func ruleserverBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ruleserver-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "ruleserver")
		if typeScriptServer() {
			binErr = writeTypeScriptCommand(binPath)
			return
		}
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/sdods/sdods/cmd/ruleserver").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("build ruleserver: %v", binErr)
	}
	return binPath
}

// process is the ruleserver binary running as a child process.
type process struct {
	cmd    *exec.Cmd
	URL    string
	Addr   string
	stderr *syncBuffer
	exited chan struct{}
}

// startProcess starts the binary with env (on top of a minimal environment) and args, and waits
// for its "listening" line.
func startProcess(t testing.TB, env []string, args ...string) *process {
	t.Helper()
	return startBinary(t, ruleserverBinary(t), env, args...)
}

// startBinary is startProcess with another build of the command.
func startBinary(t testing.TB, bin string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	p := &process{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("ruleserver stderr:\n%s", p.stderr.String())
		}
	})
	waitFor(t, "the listening line", func() bool {
		for _, line := range strings.Split(p.stderr.String(), "\n") {
			var l struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "listening" {
				p.Addr, p.URL = l.Addr, "http://"+l.Addr
				return true
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("ruleserver exited early: %s", p.stderr.String())
		default:
		}
		return false
	})
	return p
}

// wait waits for the process to exit and returns its status.
func (p *process) wait(t testing.TB) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("ruleserver did not exit")
	}
	return p.cmd.ProcessState.ExitCode()
}

func readJSON(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func bufioReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }
