package egress_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/egress"
)

func mustPolicy(tb testing.TB, cfg egress.Config) *egress.Policy {
	tb.Helper()
	p, err := egress.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestCheckAddr(t *testing.T) {
	def := mustPolicy(t, egress.Config{})
	def.DenyEndpoint(netip.MustParseAddrPort("10.0.0.5:5432"), "the server's database")
	loop := mustPolicy(t, egress.Config{Allow: []string{"127.0.0.0/8", "::1"}, Deny: []string{"127.0.0.1:9999", "*.internal.example", "10.9.0.0/16"}})
	loop.DenyEndpoint(netip.MustParseAddrPort("127.0.0.1:8080"), "the server's own listener")
	open := mustPolicy(t, egress.Config{Allow: []string{"10.9.8.0/24", "ok.internal.example"}, Deny: []string{"10.9.0.0/16", "*.internal.example"}})
	for _, tc := range []struct {
		name   string
		p      *egress.Policy
		host   string
		addr   string
		denied bool
	}{
		{"public address", def, "", "93.184.216.34:443", false},
		{"private network is the product's job", def, "", "10.1.2.3:80", false},
		{"loopback", def, "", "127.0.0.1:80", true},
		{"loopback by name", def, "localhost", "127.0.0.1:80", true},
		{"loopback elsewhere in 127/8", def, "", "127.8.9.10:80", true},
		{"IPv6 loopback", def, "", "[::1]:80", true},
		{"cloud metadata", def, "", "169.254.169.254:80", true},
		{"IPv6 link-local", def, "", "[fe80::1]:80", true},
		{"unspecified", def, "", "0.0.0.0:80", true},
		{"IPv4-mapped loopback", def, "", "[::ffff:127.0.0.1]:80", true},
		{"IPv4-compatible loopback", def, "", "[::7f00:1]:80", true},
		{"NAT64 loopback", def, "", "[64:ff9b::7f00:1]:80", true},
		{"NAT64 metadata", def, "", "[64:ff9b::a9fe:a9fe]:80", true},
		{"local-use NAT64 loopback", def, "", "[64:ff9b:1:7f00:0:100::]:80", true},
		{"6to4 loopback", def, "", "[2002:7f00:1::1]:80", true},
		{"Teredo client loopback", def, "", "[2001:0:4136:e378:8000:63bf:80ff:fffe]:80", true},
		{"NAT64 public", def, "", "[64:ff9b::5db8:d822]:80", false},
		{"database endpoint", def, "", "10.0.0.5:5432", true},
		{"database host, other port", def, "", "10.0.0.5:80", false},
		{"loopback allowed by the operator", loop, "", "127.0.0.1:3000", false},
		{"IPv6 loopback allowed", loop, "", "[::1]:3000", false},
		{"own listener stays denied", loop, "", "127.0.0.1:8080", true},
		{"operator's endpoint deny", loop, "", "127.0.0.1:9999", true},
		{"metadata stays denied", loop, "", "169.254.169.254:80", true},
		{"name suffix deny", loop, "db.internal.example", "93.184.216.34:443", true},
		{"name deny does not apply to a literal", loop, "", "93.184.216.34:443", false},
		{"longer allow prefix wins", open, "", "10.9.8.7:80", false},
		{"shorter deny prefix", open, "", "10.9.7.7:80", true},
		{"exact name beats suffix", open, "ok.internal.example", "10.9.7.7:80", false},
		{"suffix", open, "x.internal.example", "10.9.8.7:80", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.CheckAddr(tc.host, netip.MustParseAddrPort(tc.addr))
			if (err != nil) != tc.denied {
				t.Fatalf("CheckAddr(%q, %s) = %v, want denied=%v", tc.host, tc.addr, err, tc.denied)
			}
			if err != nil && !errors.Is(err, egress.ErrRefused) {
				t.Fatalf("error %v is not ErrRefused", err)
			}
		})
	}
}

func TestParseRuleRefusesGarbage(t *testing.T) {
	for _, bad := range []string{"", "10.0.0.0/33", "http://x", "a b", "*.", "::1:99999"} {
		if _, err := egress.ParseRule(bad, false); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		}
	}
	if _, err := egress.New(egress.Config{Allow: []string{"127.0.0.0/8", "nope/1"}}); err == nil || !strings.Contains(err.Error(), "nope/1") {
		t.Fatalf("New: %v", err)
	}
}

// The check happens at dial time: a client of the policy's transport cannot reach a denied
// address directly, by a name, or through a redirect from an allowed one.
func TestTransportChecksEveryDial(t *testing.T) {
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("the denied server was reached: %s", r.URL) }))
	defer denied.Close()
	allowed := httptest.NewServer(http.RedirectHandler(denied.URL+"/secret", http.StatusFound))
	defer allowed.Close()
	p := mustPolicy(t, egress.Config{Allow: []string{"127.0.0.0/8"}, Deny: []string{denied.Listener.Addr().String()}})
	c := &http.Client{Transport: p.Transport()}
	_, port, _ := net.SplitHostPort(denied.Listener.Addr().String())
	for _, u := range []string{denied.URL, "http://localhost:" + port + "/", allowed.URL} {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s: %d", u, resp.StatusCode)
		}
		if !errors.Is(err, egress.ErrRefused) {
			t.Fatalf("GET %s: %v", u, err)
		}
	}
	if _, err := egress.ContextDial(context.Background(), "tcp", allowed.Listener.Addr().String()); !errors.Is(err, egress.ErrNoPolicy) {
		t.Fatalf("ContextDial without a policy: %v", err)
	}
}

// The browser's proxy forwards plain requests and CONNECT tunnels only to what the policy
// allows, and never to itself.
func TestProxyChecksEveryDial(t *testing.T) {
	var deniedHits int
	denied := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { deniedHits++ }))
	defer denied.Close()
	deniedPlain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { deniedHits++ }))
	defer deniedPlain.Close()
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("hello")) }))
	defer allowed.Close()
	p := mustPolicy(t, egress.Config{Allow: []string{"127.0.0.0/8"}, Deny: []string{denied.Listener.Addr().String(), deniedPlain.Listener.Addr().String()}})
	px, err := p.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	proxyURL, _ := url.Parse("http://" + px.Addr())
	tr := denied.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(proxyURL)
	c := &http.Client{Transport: tr}
	resp, err := c.Get(allowed.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello" {
		t.Fatalf("allowed through the proxy: %d %q", resp.StatusCode, body)
	}
	for _, u := range []string{deniedPlain.URL, "http://" + px.Addr() + "/"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("GET %s through the proxy: %d", u, resp.StatusCode)
		}
	}
	if resp, err := c.Get(denied.URL); err == nil { // https: a CONNECT tunnel
		resp.Body.Close()
		t.Fatalf("CONNECT to a denied endpoint: %d", resp.StatusCode)
	}
	if deniedHits != 0 {
		t.Fatalf("denied servers received %d request(s)", deniedHits)
	}
}
