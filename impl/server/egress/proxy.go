package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"sync"
	"time"
)

// Proxy is an HTTP forward proxy on loopback that dials through the policy: a browser configured
// to use it for everything (loopback included) reaches only what the policy allows, checked at
// dial time like the HTTP client — WebSockets, rebinding names and requests the DevTools
// interception does not see included.
type Proxy struct {
	policy *Policy
	ln     net.Listener
	self   netip.AddrPort
	srv    *http.Server
	rp     *httputil.ReverseProxy

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // hijacked tunnels, closed by Close
	closed bool
}

// StartProxy listens on a loopback port and serves until Close.
func (p *Policy) StartProxy() (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	px := &Proxy{policy: p, ln: ln, conns: map[net.Conn]struct{}{}}
	px.self, _ = netip.ParseAddrPort(ln.Addr().String())
	t := p.Transport()
	t.DialContext = px.dial
	px.rp = &httputil.ReverseProxy{
		// A proxy request's URL is absolute already: keep it, and the Host it names.
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.Host = pr.In.Host },
		Transport: t,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			status := http.StatusBadGateway
			if errors.Is(err, ErrRefused) {
				status = http.StatusForbidden
			}
			http.Error(w, err.Error(), status)
		},
	}
	px.srv = &http.Server{Handler: px, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = px.srv.Serve(ln) }()
	return px, nil
}

// Addr returns the proxy's address, host:port.
func (px *Proxy) Addr() string { return px.ln.Addr().String() }

// Close stops the proxy and every tunnel through it.
func (px *Proxy) Close() error {
	px.mu.Lock()
	px.closed = true
	for c := range px.conns {
		c.Close()
	}
	px.mu.Unlock()
	return px.srv.Close()
}

// errSelf refuses a request to the proxy itself, which would loop.
var errSelf = &RefusedError{Rule: Rule{Text: "the browser's egress proxy", Deny: true, BuiltIn: true}}

func (px *Proxy) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if ap, err := netip.ParseAddrPort(address); err == nil && netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()) == px.self {
		return nil, errSelf
	}
	c, err := px.policy.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil && netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()) == px.self {
		c.Close()
		return nil, errSelf
	}
	return c, nil
}

func (px *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		if !r.URL.IsAbs() || r.URL.Scheme != "http" {
			http.Error(w, "this proxy forwards absolute http URLs and CONNECT tunnels only", http.StatusBadRequest)
			return
		}
		px.rp.ServeHTTP(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	up, err := px.dial(ctx, "tcp", r.Host)
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, ErrRefused) {
			status = http.StatusForbidden
		}
		http.Error(w, err.Error(), status)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "tunnels are not supported", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	px.mu.Lock()
	if px.closed {
		px.mu.Unlock()
		up.Close()
		down.Close()
		return
	}
	px.conns[down], px.conns[up] = struct{}{}, struct{}{}
	px.mu.Unlock()
	defer func() {
		px.mu.Lock()
		delete(px.conns, down)
		delete(px.conns, up)
		px.mu.Unlock()
		up.Close()
		down.Close()
	}()
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// what the client sent after its CONNECT line, then the rest
		_, _ = io.Copy(up, buf.Reader)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(down, up)
		done <- struct{}{}
	}()
	<-done
}
