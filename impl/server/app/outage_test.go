package app_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// pgProxy forwards TCP connections to PostgreSQL until it is taken down: then the address refuses
// connections and every forwarded connection is cut, as when the database host goes away.
type pgProxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func startPGProxy(t *testing.T, target string) *pgProxy {
	p := &pgProxy{t: t, target: target, addr: "127.0.0.1:0"}
	p.up()
	t.Cleanup(p.down)
	return p
}

func (p *pgProxy) up() {
	p.t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy listen: %v", err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *pgProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestDatabaseOutage is issue 18 item 10: while PostgreSQL is unreachable, health answers 503
// (status degraded, database down) and login, setup-status and listings answer 503 unavailable
// with Retry-After — never 500 internal, 404 or 401; when it is back, everything answers again.
func TestDatabaseOutage(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startPGProxy(t, u.Host)
	u.Host = proxy.addr
	s := apptest.StartOn(t, u.String(), nil)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "projects:read", "runs:read")
	auth := []string{"Authorization", "Bearer " + token}
	login, _ := json.Marshal(map[string]string{"email": "admin@example.com", "password": apptest.AdminPassword})
	type req struct {
		name, method, path string
		body               []byte
		header             []string
	}
	reqs := []req{
		{"login", "POST", "/api/auth/login", login, nil},
		{"setup status", "GET", "/api/auth/setup-status", nil, nil},
		{"projects", "GET", "/api/projects", nil, auth},
		{"runs", "GET", "/api/runs", nil, auth},
		{"project", "GET", "/api/projects/shop", nil, auth},
	}
	do := func(r req) (int, []byte, http.Header) {
		ct := ""
		if r.body != nil {
			ct = "application/json"
		}
		return s.Do(t, r.method, r.path, ct, r.body, r.header...)
	}
	if status, body, _ := s.Do(t, "GET", "/api/health", "", nil); status != http.StatusOK {
		t.Fatalf("health before: %d %s", status, body)
	}

	proxy.down()
	status, body, h := s.Do(t, "GET", "/api/health", "", nil)
	var health struct {
		Status   string
		Database struct{ Status string }
	}
	_ = json.Unmarshal(body, &health)
	if status != http.StatusServiceUnavailable || health.Status != "degraded" || health.Database.Status != "down" || h.Get("Retry-After") == "" {
		t.Fatalf("health while down: %d %s %v", status, body, h)
	}
	for _, r := range reqs {
		status, body, h := do(r)
		if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || mustErrorBody(t, body).Error.Code != "unavailable" {
			t.Errorf("%s while the database is down: %d %s (Retry-After %q)", r.name, status, body, h.Get("Retry-After"))
		}
	}

	proxy.up()
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, body, _ := s.Do(t, "GET", "/api/health", "", nil)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health after the database returned: %d %s", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, r := range reqs {
		if status, body, _ := do(r); status != http.StatusOK {
			t.Errorf("%s after the outage: %d %s", r.name, status, body)
		}
	}
}
