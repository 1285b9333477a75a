package integrations

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestInternalAddresses(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		internal bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"::1", true}, {"10.1.2.3", true}, {"172.16.0.1", true},
		{"192.168.1.1", true}, {"169.254.169.254", true}, {"fe80::1", true}, {"fd00::1", true},
		{"0.0.0.0", true}, {"::", true}, {"100.64.0.1", true}, {"0.1.2.3", true}, {"224.0.0.1", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true},
		{"::7f00:1", true}, {"64:ff9b::7f00:1", true}, {"64:ff9b::a9fe:a9fe", true}, {"2002:7f00:1::1", true}, {"64:ff9b::5db8:d822", false},
		{"93.184.216.34", false}, {"8.8.8.8", false}, {"2606:4700::1111", false}, {"172.32.0.1", false},
		{"100.128.0.1", false},
	} {
		if got := internal(netip.MustParseAddr(tc.addr)); got != tc.internal {
			t.Errorf("%s: internal %v, want %v", tc.addr, got, tc.internal)
		}
	}
}

// By default a delivery to a loopback server (as a name or an address) is refused before any
// byte is sent; with AllowPrivate it goes through.
func TestDeliveryRefusesInternalAddresses(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	ctx := context.Background()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, url := range []string{srv.URL, fmt.Sprintf("http://localhost:%d/", port)} {
		err := Webhook{}.Test(ctx, WebhookConfig{URL: url})
		if !errors.Is(err, ErrInternalAddress) {
			t.Errorf("%s: error %v, want ErrInternalAddress", url, err)
		}
	}
	if hits != 0 {
		t.Fatalf("the refused deliveries reached the server %d times", hits)
	}
	if err := (Webhook{AllowPrivate: true}).Test(ctx, WebhookConfig{URL: srv.URL}); err != nil || hits != 1 {
		t.Fatalf("allowed delivery: %v, %d hits", err, hits)
	}
}

// A public endpoint that redirects to an internal address is refused at the redirect.
func TestDeliveryRefusesRedirectToInternal(t *testing.T) {
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the redirect reached the internal server")
	}))
	defer inner.Close()
	// the redirecting server is itself on loopback, so the test dials it through a client that
	// allows it for the first hop only
	outer := httptest.NewServer(http.RedirectHandler(inner.URL, http.StatusTemporaryRedirect))
	defer outer.Close()
	first := true
	c := Webhook{}.client()
	base := c.Transport.(*http.Transport)
	allowFirst := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if first {
			first = false
			return (&Webhook{AllowPrivate: true}).client().Transport.(*http.Transport).DialContext(ctx, network, addr)
		}
		return base.DialContext(ctx, network, addr)
	}, DisableKeepAlives: true}
	err := Webhook{Client: &http.Client{Transport: allowFirst}}.Test(context.Background(), WebhookConfig{URL: outer.URL})
	if !errors.Is(err, ErrInternalAddress) {
		t.Fatalf("error %v, want ErrInternalAddress", err)
	}
}
