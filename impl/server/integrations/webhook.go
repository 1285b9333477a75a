package integrations

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/egress"
)

// WebhookConfig is a webhook integration's configuration with its secret in the clear.
type WebhookConfig struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"-"`
}

// Headers of a delivery.
const (
	HeaderEvent     = "X-Sdods-Event"
	HeaderDelivery  = "X-Sdods-Delivery"
	HeaderSignature = "X-Sdods-Signature" // "sha256=" + hex HMAC-SHA256 of the body with the secret
)

// Webhook posts deliveries.
type Webhook struct {
	Client *http.Client // nil: a client with a 10 s timeout that refuses internal addresses
	// AllowPrivate lets the default client deliver to loopback, private, link-local and other
	// internal addresses. Off by default: a webhook URL is chosen by a project editor, and the
	// server must not become a way to reach what only it can reach (cloud metadata, databases,
	// admin consoles).
	AllowPrivate bool
}

// ErrInternalAddress is returned for a delivery to an address the webhook may not reach.
var ErrInternalAddress = errors.New("the webhook URL resolves to an internal address (loopback, private, link-local or unspecified); the server does not deliver there unless SDODS_WEBHOOK_ALLOW_PRIVATE is set")

func (w Webhook) client() *http.Client {
	if w.Client != nil {
		return w.Client
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if !w.AllowPrivate {
		// checked on the address actually dialled, after name resolution and on every redirect,
		// so a name that resolves to an internal address (or rebinds to one) is refused too
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip, err := netip.ParseAddr(host); err != nil || internal(ip) {
				return ErrInternalAddress
			}
			return nil
		}
	}
	// no proxy: a proxy would dial on the server's behalf, out of reach of the check above;
	// no keep-alive: each delivery has a client of its own
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: dialer.DialContext, DisableKeepAlives: true, TLSHandshakeTimeout: 10 * time.Second,
	}}
}

// internal reports whether ip, or an IPv4 address it embeds (::ffff:127.0.0.1, ::7f00:1,
// 64:ff9b::7f00:1), is an address a webhook may not reach by default.
func internal(ip netip.Addr) bool {
	for _, f := range egress.Forms(ip) {
		if internalForm(f.Unmap()) {
			return true
		}
	}
	return false
}

func internalForm(ip netip.Addr) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		sharedSpace.Contains(ip) || thisNetwork.Contains(ip)
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598 carrier-grade NAT
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")     // RFC 1122 "this network"
)

// Sign returns the signature header value of body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Deliver posts one event with its JSON payload; a status other than 2xx is an error.
func (w Webhook) Deliver(ctx context.Context, c WebhookConfig, event string, payload any) error {
	body, err := json.Marshal(map[string]any{"event": event, "sentAt": time.Now().UTC().Format(time.RFC3339), "data": payload})
	if err != nil {
		return fmt.Errorf("encode delivery: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sdods-webhook")
	req.Header.Set(HeaderEvent, event)
	req.Header.Set(HeaderDelivery, uuid.NewString())
	if c.Secret != "" {
		req.Header.Set(HeaderSignature, Sign(c.Secret, body))
	}
	resp, err := w.client().Do(req)
	if err != nil {
		return fmt.Errorf("post %s: %w", event, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the endpoint answered %s", resp.Status)
	}
	return nil
}

// Test sends a ping delivery.
func (w Webhook) Test(ctx context.Context, c WebhookConfig) error {
	return w.Deliver(ctx, c, "ping", map[string]any{"message": "sdods webhook test"})
}

// RunOutcome is the payload of a run event.
type RunOutcome struct {
	RunID      uuid.UUID `json:"runId"`
	Project    string    `json:"project"`
	Status     string    `json:"status"` // passed, failed, errored, cancelled or timed_out
	URL        string    `json:"url,omitempty"`
	DurationMs int64     `json:"durationMs"`
	Counts     any       `json:"counts,omitempty"`
	FinishedAt time.Time `json:"finishedAt"`
}

// Wants returns the events of c a finished run with status sends: run.finished and run.<status>,
// each when subscribed.
func (c WebhookConfig) Wants(status string) []string {
	var out []string
	for _, e := range []string{"run.finished", "run." + status} {
		if slices.Contains(c.Events, e) {
			out = append(out, e)
		}
	}
	return out
}
