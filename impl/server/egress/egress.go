// Package egress is the instance's egress policy: which addresses the server may reach on behalf
// of a test (HTTP and browser steps) or a Git integration. Testing internal services is the
// product's job, so the policy allows by default and denies only what belongs to the server
// itself: loopback, link-local (cloud metadata included), the server's own listen addresses and
// its database. Instance operators add allowed and denied CIDRs, endpoints and host names.
//
// The check happens after name resolution, on the address actually dialled (Dialer), so a name
// that resolves, or rebinds, to a denied address is refused, and on every redirect, since each
// hop dials again.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Config is what an operator sets: rules in the forms CIDR ("10.0.0.0/8"), address ("10.1.2.3"),
// endpoint ("10.1.2.3:5432", "[::1]:8080"), host name ("db.example.com") or host-name suffix
// ("*.example.com").
type Config struct {
	Allow []string
	Deny  []string
}

// kinds of rule, in rising specificity.
const (
	kindPrefix   = iota // specificity: prefix bits
	kindSuffix          // 200 + labels
	kindName            // 300
	kindEndpoint        // 400
)

// Rule is one parsed rule.
type Rule struct {
	// Text is the rule as written (or as built in).
	Text string
	// Deny tells a deny rule from an allow rule.
	Deny bool
	// BuiltIn marks the defaults; Reason says why a built-in exists.
	BuiltIn bool
	Reason  string

	kind     int
	prefix   netip.Prefix
	endpoint netip.AddrPort
	name     string // lower case, no trailing dot; a suffix keeps its leading dot
}

// specificity orders matching rules: the most specific decides.
func (r Rule) specificity() int {
	switch r.kind {
	case kindEndpoint:
		return 400
	case kindName:
		return 300
	case kindSuffix:
		return 200 + strings.Count(r.name, ".")
	}
	return r.prefix.Bits()
}

// ParseRule reads one rule; deny chooses its effect.
func ParseRule(text string, deny bool) (Rule, error) {
	s := strings.TrimSpace(text)
	r := Rule{Text: s, Deny: deny}
	if s == "" {
		return r, errors.New("empty rule")
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		r.kind, r.prefix = kindPrefix, p.Masked()
		return r, nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		r.kind, r.prefix = kindPrefix, netip.PrefixFrom(a, a.BitLen())
		return r, nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		r.kind, r.endpoint = kindEndpoint, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		return r, nil
	}
	name := strings.TrimSuffix(strings.ToLower(s), ".")
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		if !validName(rest) {
			return r, fmt.Errorf("%q is not a CIDR, an address, an endpoint (address:port) or a host name", text)
		}
		r.kind, r.name = kindSuffix, "."+rest
		return r, nil
	}
	if !validName(name) {
		return r, fmt.Errorf("%q is not a CIDR, an address, an endpoint (address:port) or a host name", text)
	}
	r.kind, r.name = kindName, name
	return r, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// builtIns are the default denies every policy starts with.
var builtIns = []struct{ text, reason string }{
	{"127.0.0.0/8", "loopback"},
	{"::1/128", "loopback"},
	{"169.254.0.0/16", "link-local (cloud metadata 169.254.169.254)"},
	{"fe80::/10", "link-local"},
	{"0.0.0.0/8", "this host (unspecified)"},
	{"::/128", "this host (unspecified)"},
	{"fd00:ec2::254/128", "cloud metadata (AWS IPv6)"},
	{"100.100.100.200/32", "cloud metadata (Alibaba Cloud)"},
}

// Policy decides which addresses may be reached. It is safe for concurrent use.
type Policy struct {
	mu    sync.RWMutex
	rules []Rule
	// Resolver resolves host names (nil: net.DefaultResolver).
	Resolver *net.Resolver
}

// New returns the policy of cfg on top of the built-in denies; it refuses a malformed rule.
func New(cfg Config) (*Policy, error) {
	p := &Policy{}
	for _, b := range builtIns {
		r, err := ParseRule(b.text, true)
		if err != nil {
			return nil, err
		}
		r.BuiltIn, r.Reason = true, b.reason
		p.rules = append(p.rules, r)
	}
	var errs []error
	for _, list := range []struct {
		rules []string
		deny  bool
	}{{cfg.Allow, false}, {cfg.Deny, true}} {
		for _, t := range list.rules {
			if strings.TrimSpace(t) == "" {
				continue
			}
			r, err := ParseRule(t, list.deny)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p.rules = append(p.rules, r)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("egress policy: %w", err)
	}
	return p, nil
}

// DenyEndpoint adds a built-in deny of one endpoint (the server's listener, its database); an
// unspecified address stands for every address of this host's interfaces.
func (p *Policy) DenyEndpoint(ap netip.AddrPort, reason string) {
	addrs := []netip.Addr{ap.Addr().Unmap()}
	if ap.Addr().IsUnspecified() {
		if ifs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range ifs {
				if n, ok := a.(*net.IPNet); ok {
					if ip, ok := netip.AddrFromSlice(n.IP); ok {
						addrs = append(addrs, ip.Unmap())
					}
				}
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range addrs {
		ep := netip.AddrPortFrom(a, ap.Port())
		if slices.ContainsFunc(p.rules, func(r Rule) bool { return r.kind == kindEndpoint && r.endpoint == ep && r.Deny }) {
			continue
		}
		p.rules = append(p.rules, Rule{Text: ep.String(), Deny: true, BuiltIn: true, Reason: reason, kind: kindEndpoint, endpoint: ep})
	}
}

// DenyHostPort resolves host (a name or an address) and denies each of its addresses at port, as
// DenyEndpoint does; a name that does not resolve is skipped.
func (p *Policy) DenyHostPort(ctx context.Context, host string, port uint16, reason string) {
	if a, err := netip.ParseAddr(host); err == nil {
		p.DenyEndpoint(netip.AddrPortFrom(a, port), reason)
		return
	}
	addrs, err := p.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return
	}
	for _, a := range addrs {
		p.DenyEndpoint(netip.AddrPortFrom(a, port), reason)
	}
}

// Rules returns the rules in force: the built-ins first, then the operator's.
func (p *Policy) Rules() []Rule {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Clone(p.rules)
}

// RefusedError tells which rule refused an address.
type RefusedError struct {
	Host string // as requested; empty for an address
	Addr netip.AddrPort
	Rule Rule
}

func (e *RefusedError) Error() string {
	what := e.Addr.String()
	if e.Host != "" && e.Host != e.Addr.Addr().String() {
		what = fmt.Sprintf("%s (%s)", e.Host, e.Addr)
	}
	why := e.Rule.Text
	if e.Rule.Reason != "" {
		why += ", " + e.Rule.Reason
	}
	return fmt.Sprintf("the server's egress policy refuses %s (rule %s); an instance operator can allow it with -egress-allow (SDODS_EGRESS_ALLOW)", what, why)
}

// ErrRefused matches every refusal with errors.Is.
var ErrRefused = errors.New("refused by the egress policy")

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// CheckAddr decides one address reached as host (the name requested, or "" for an address
// literal). An IPv6 address that embeds an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo)
// is refused when either form is.
func (p *Policy) CheckAddr(host string, ap netip.AddrPort) error {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, a := range forms(ap.Addr()) {
		if r, ok := p.decide(host, netip.AddrPortFrom(a, ap.Port())); ok && r.Deny {
			return &RefusedError{Host: host, Addr: ap, Rule: r}
		}
	}
	return nil
}

// decide returns the most specific matching rule; at equal specificity an operator's rule beats
// a built-in and a deny beats an allow. No match: allowed.
func (p *Policy) decide(host string, ap netip.AddrPort) (Rule, bool) {
	var best Rule
	found := false
	for _, r := range p.rules {
		if !r.matches(host, ap) {
			continue
		}
		if !found || better(r, best) {
			best, found = r, true
		}
	}
	return best, found
}

func better(a, b Rule) bool {
	if sa, sb := a.specificity(), b.specificity(); sa != sb {
		return sa > sb
	}
	if a.BuiltIn != b.BuiltIn {
		return !a.BuiltIn
	}
	return a.Deny && !b.Deny
}

func (r Rule) matches(host string, ap netip.AddrPort) bool {
	switch r.kind {
	case kindEndpoint:
		return r.endpoint == ap
	case kindName:
		return host != "" && host == r.name
	case kindSuffix:
		return host != "" && strings.HasSuffix(host, r.name)
	}
	return r.prefix.Contains(ap.Addr())
}

// Forms returns the address and every IPv4 address it embeds (IPv4-mapped, IPv4-compatible,
// NAT64, 6to4, Teredo): a check of an address must hold for each.
func Forms(a netip.Addr) []netip.Addr { return forms(a) }

func forms(a netip.Addr) []netip.Addr {
	out := []netip.Addr{a}
	if a.Is4In6() {
		return append(out, a.Unmap())
	}
	if !a.Is6() {
		return out
	}
	b := a.As16()
	v4 := func(x, y, z, w byte) netip.Addr { return netip.AddrFrom4([4]byte{x, y, z, w}) }
	switch {
	case compat.Contains(a) && !a.IsUnspecified() && !a.IsLoopback(): // ::a.b.c.d (deprecated IPv4-compatible)
		out = append(out, v4(b[12], b[13], b[14], b[15]))
	case nat64.Contains(a): // 64:ff9b::a.b.c.d (RFC 6052 well-known prefix)
		out = append(out, v4(b[12], b[13], b[14], b[15]))
	case nat64Local.Contains(a): // 64:ff9b:1::/48 (RFC 8215): IPv4 in bits 48-63 and 72-87
		out = append(out, v4(b[6], b[7], b[9], b[10]))
	case sixToFour.Contains(a): // 2002:aabb:ccdd::/48
		out = append(out, v4(b[2], b[3], b[4], b[5]))
	case teredo.Contains(a): // 2001:0:server::client^ffff
		out = append(out, v4(b[4], b[5], b[6], b[7]), v4(b[12]^0xff, b[13]^0xff, b[14]^0xff, b[15]^0xff))
	}
	return out
}

var (
	compat     = netip.MustParsePrefix("::/96")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
)

func (p *Policy) resolver() *net.Resolver {
	if p.Resolver != nil {
		return p.Resolver
	}
	return net.DefaultResolver
}

// Resolve returns the addresses of host (a name or an address literal) at port, refusing the
// whole host when any of them is refused, so that a name with one public and one internal
// record cannot pick the internal one later.
func (p *Policy) Resolve(ctx context.Context, host string, port uint16) ([]netip.AddrPort, error) {
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	var addrs []netip.Addr
	name := ""
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.WithZone("")}
	} else {
		name = host
		addrs, err = p.resolver().LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port)
		if err := p.CheckAddr(name, ap); err != nil {
			return nil, err
		}
		out = append(out, ap)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	return out, nil
}

// DialContext resolves address's host, checks every address and dials the first that answers,
// by its address literal so that no second resolution can rebind it.
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portText, err)
	}
	addrs, err := p.Resolve(ctx, host, uint16(port))
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var first error
	for _, ap := range addrs {
		c, err := d.DialContext(ctx, network, ap.String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

type ctxKey struct{}

// WithPolicy returns ctx carrying p, for ContextDial.
func WithPolicy(ctx context.Context, p *Policy) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the policy WithPolicy put in ctx, or nil.
func FromContext(ctx context.Context) *Policy {
	p, _ := ctx.Value(ctxKey{}).(*Policy)
	return p
}

// ErrNoPolicy is returned by ContextDial when the context carries no policy: fail closed.
var ErrNoPolicy = errors.New("no egress policy in the context: refusing to dial")

// ContextDial dials with the policy the context carries (WithPolicy) and refuses without one;
// it serves transports shared by callers with different policies (go-git's global protocols).
func ContextDial(ctx context.Context, network, address string) (net.Conn, error) {
	p := FromContext(ctx)
	if p == nil {
		return nil, ErrNoPolicy
	}
	return p.DialContext(ctx, network, address)
}

// Transport returns an HTTP transport that dials through the policy. It uses no proxy: a proxy
// would dial on the server's behalf, out of the policy's reach.
func (p *Policy) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = p.DialContext
	return t
}
