package steplib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sdods/sdods/impl/server/egress"
)

// BrowserOptions configure the headless Chromium of a run.
type BrowserOptions struct {
	// ExecPath is the Chromium binary: a path, or a name looked up in PATH. Default "chromium",
	// then "chromium-browser", "google-chrome".
	ExecPath string
	// Width and Height are the default viewport of each page (1280x800).
	Width, Height int
	// Logf receives the browser's diagnostics; nil discards them.
	Logf func(format string, args ...any)
	// Egress decides which addresses the browser may reach; nil: the built-in denies alone.
	// Whatever it says, the browser fetches nothing but http and https.
	Egress *egress.Policy
}

// Browser is one headless Chromium shared by the scenarios of a run, started on first use; each
// session gets its own tab in its own browser context (no shared cookies or storage).
type Browser struct {
	opts BrowserOptions

	once    sync.Once
	ready   chan struct{}
	err     error
	dataDir string
	version string

	mu            sync.Mutex
	refusals      []refusal // most recent last, bounded
	proxy         *egress.Proxy
	closed        bool
	cancelAlloc   context.CancelFunc
	browserCtx    context.Context
	cancelBrowser context.CancelFunc
}

// NewBrowser returns a browser that starts when a browser step first needs it.
func NewBrowser(opts BrowserOptions) *Browser {
	if opts.Width <= 0 || opts.Height <= 0 {
		opts.Width, opts.Height = 1280, 800
	}
	if opts.Egress == nil {
		opts.Egress, _ = egress.New(egress.Config{})
	}
	return &Browser{opts: opts, ready: make(chan struct{})}
}

// refusal is a request of the browser the guard failed.
type refusal struct {
	at          time.Time
	url, reason string
}

// guard pauses every request of every tab, frame and worker of the browser (the DevTools Fetch
// domain on the browser target) and lets through only http and https requests to addresses the
// egress policy allows: navigations, redirects and subresources alike. Chromium does not pause
// data: and chrome: URLs; steps never open them and Chromium refuses web pages navigating to them.
func (b *Browser) guard(ctx context.Context) error {
	c := chromedp.FromContext(ctx)
	err := chromedp.ListenBrowser(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			go b.decide(ctx, c.Browser, e)
		}
	})
	if err != nil {
		return err
	}
	_, err = cdp.Call(ctx, c.Browser, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
	return err
}

func (b *Browser) decide(ctx context.Context, sess cdp.Session, e *fetch.EventRequestPaused) {
	reason := b.refuse(ctx, e.Request.URL)
	if reason == "" {
		_, _ = cdp.Call(ctx, sess, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		return
	}
	b.mu.Lock()
	b.refusals = append(b.refusals, refusal{at: time.Now(), url: e.Request.URL, reason: reason})
	if len(b.refusals) > 64 {
		b.refusals = b.refusals[len(b.refusals)-64:]
	}
	b.mu.Unlock()
	if b.opts.Logf != nil {
		b.opts.Logf("browser request refused: %s: %s", e.Request.URL, reason)
	}
	_, _ = cdp.Call(ctx, sess, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
}

// refuse returns why the browser may not fetch raw, or "".
func (b *Browser) refuse(ctx context.Context, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the URL cannot be parsed"
	}
	var port uint16
	switch u.Scheme {
	case "http":
		port = 80
	case "https":
		port = 443
	default:
		return fmt.Sprintf("only http and https URLs may be fetched (the scheme is %q)", u.Scheme)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return "the port cannot be parsed"
		}
		port = uint16(n)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := b.opts.Egress.Resolve(rctx, u.Hostname(), port); err != nil {
		return err.Error()
	}
	return ""
}

// refusedSince describes the requests the guard refused since t, for a step's error.
func (b *Browser) refusedSince(t time.Time) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, r := range b.refusals {
		if !r.at.Before(t) {
			out = append(out, fmt.Sprintf("%s refused: %s", r.url, r.reason))
		}
	}
	return strings.Join(out, "; ")
}

// Name returns the browser's name as visual checks record it.
func (b *Browser) Name() string { return "chromium" }

// Version returns the browser's product version once it started, or "".
func (b *Browser) Version() string {
	select {
	case <-b.ready:
		return b.version
	default:
		return ""
	}
}

// FindChromium resolves the Chromium binary: the given path or name, or the usual names in PATH.
// It refuses with an error saying how to install it.
func FindChromium(execPath string) (string, error) {
	names := []string{execPath}
	if execPath == "" {
		names = []string{"chromium", "chromium-browser", "google-chrome"}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium not found (looked for %s): install it (Debian: apt-get install chromium) or configure its path", strings.Join(names, ", "))
}

// start launches Chromium once; callers wait for it or for their context.
func (b *Browser) start(ctx context.Context) error {
	b.once.Do(func() { go b.launch() })
	select {
	case <-b.ready:
		return b.err
	case <-ctx.Done():
		return stepContextError(ctx)
	}
}

func (b *Browser) launch() {
	defer close(b.ready)
	path, err := FindChromium(b.opts.ExecPath)
	if err != nil {
		b.err = err
		return
	}
	// Every connection of the browser goes through a proxy that dials under the egress policy,
	// loopback included (<-loopback> removes Chromium's implicit bypass), and WebRTC may not
	// send UDP around it: what the Fetch guard cannot see (WebSockets, a name that rebinds
	// after the guard resolved it) is still checked at dial time.
	px, err := b.opts.Egress.StartProxy()
	if err != nil {
		b.err = fmt.Errorf("start the browser's egress proxy: %w", err)
		return
	}
	b.mu.Lock()
	b.proxy = px
	closedEarly := b.closed
	b.mu.Unlock()
	if closedEarly {
		px.Close()
		b.err = errors.New("the browser was closed")
		return
	}
	dir, err := os.MkdirTemp("", "sdods-chromium-")
	if err != nil {
		b.err = fmt.Errorf("chromium user data dir: %w", err)
		return
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.WindowSize(b.opts.Width, b.opts.Height),
		chromedp.ProxyServer("http://" + px.Addr()),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	var ctxOpts []chromedp.ContextOption
	logf := b.opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	ctxOpts = append(ctxOpts, chromedp.WithLogf(logf), chromedp.WithErrorf(logf))
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, ctxOpts...)
	b.mu.Lock()
	b.dataDir, b.cancelAlloc, b.browserCtx, b.cancelBrowser = dir, cancelAlloc, browserCtx, cancelBrowser
	closed := b.closed
	b.mu.Unlock()
	if closed {
		b.err = errors.New("the browser was closed")
		return
	}
	v, err := chromedp.Run(browserCtx, func(ctx context.Context, t *chromedp.Target) (string, error) {
		r, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.GetVersion, cdp.Empty{})
		return r.Product, err
	})
	if err != nil {
		b.err = fmt.Errorf("start chromium (%s): %w", path, err)
		return
	}
	if err := b.guard(browserCtx); err != nil {
		b.err = fmt.Errorf("guard chromium's requests: %w", err)
		return
	}
	b.version = v
}

// Close stops the browser and removes its profile; safe to call more than once.
func (b *Browser) Close() error {
	b.mu.Lock()
	b.closed = true
	cancelBrowser, cancelAlloc, dir, px := b.cancelBrowser, b.cancelAlloc, b.dataDir, b.proxy
	b.cancelBrowser, b.cancelAlloc, b.dataDir, b.proxy = nil, nil, "", nil
	b.mu.Unlock()
	if px != nil {
		defer px.Close()
	}
	if cancelBrowser != nil {
		cancelBrowser()
	}
	if cancelAlloc != nil {
		cancelAlloc()
	}
	if dir != "" {
		return os.RemoveAll(dir)
	}
	return nil
}

// page is a session's tab.
type page struct {
	ctx           context.Context
	cancel        context.CancelFunc
	width, height int
}

func (p *page) close() { p.cancel() }

// browserPage returns the session's tab, opening it (and starting the browser) on first use.
func (s *Session) browserPage(ctx context.Context) (*page, error) {
	if s.page != nil {
		return s.page, nil
	}
	b := s.cfg.Browser
	if b == nil {
		return nil, errors.New("browser steps are not available in this run (no browser configured)")
	}
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	b.mu.Lock()
	parent := b.browserCtx
	closed := b.closed
	b.mu.Unlock()
	if closed || parent == nil {
		return nil, errors.New("the browser was closed")
	}
	tabOpts := []chromedp.ContextOption{chromedp.WithNewBrowserContext()}
	if s.cfg.Recorder != nil {
		tabOpts = append(tabOpts, chromedp.WithListener(s.cfg.Recorder.event))
	}
	tabCtx, cancel := chromedp.NewContext(parent, tabOpts...)
	p := &page{ctx: tabCtx, cancel: cancel, width: b.opts.Width, height: b.opts.Height}
	// The first action on a tab context creates the tab; it must not run under the step's
	// context, whose end would close the tab, so it runs on its own and the step waits for it.
	done := make(chan error, 1)
	go func() {
		done <- chromedp.Do(tabCtx, chromedp.EmulateViewport(int64(p.width), int64(p.height)))
	}()
	select {
	case err := <-done:
		if err != nil {
			cancel()
			return nil, fmt.Errorf("open a browser tab: %w", err)
		}
	case <-ctx.Done():
		go func() { <-done; cancel() }()
		return nil, stepContextError(ctx)
	}
	s.page = p
	return p, nil
}

// runPage runs an action on the page under the step's context: the action stops when ctx ends.
func runPage[T any](ctx context.Context, p *page, a chromedp.Action[T]) (T, error) {
	actx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	v, err := chromedp.Run(actx, a)
	if err != nil && ctx.Err() != nil {
		var zero T
		return zero, stepContextError(ctx)
	}
	return v, err
}

// waitFor polls cond until it returns true, failing with the message of its last error or
// describe() when the wait timeout passes.
func (s *Session) waitFor(ctx context.Context, cond func() (bool, error), describe func() string) error {
	deadline := time.Now().Add(s.cfg.WaitTimeout)
	for {
		ok, err := cond()
		if err != nil && !navigating(err) {
			return err
		}
		if ok && err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("%s after %s: %w", describe(), s.cfg.WaitTimeout, err)
			}
			return fmt.Errorf("%s after %s", describe(), s.cfg.WaitTimeout)
		}
		select {
		case <-ctx.Done():
			return stepContextError(ctx)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// navigating reports whether err only says that the page was replaced while it was read (a click
// that submitted a form, a redirect): the next poll reads the new page.
func navigating(err error) bool {
	msg := err.Error()
	for _, transient := range []string{"navigated or closed", "Execution context was destroyed", "Cannot find context with specified id"} {
		if strings.Contains(msg, transient) {
			return true
		}
	}
	return false
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var keyNames = map[string]string{
	"enter": kb.Enter, "return": kb.Enter, "tab": kb.Tab, "escape": kb.Escape, "esc": kb.Escape,
	"backspace": kb.Backspace, "delete": kb.Delete, "space": " ",
	"arrowdown": kb.ArrowDown, "arrowup": kb.ArrowUp, "arrowleft": kb.ArrowLeft, "arrowright": kb.ArrowRight,
	"home": kb.Home, "end": kb.End, "pageup": kb.PageUp, "pagedown": kb.PageDown,
}

func (s *Session) screenshot(ctx context.Context, c *call, selector string) ([]byte, string, error) {
	p, err := s.browserPage(ctx)
	if err != nil {
		return nil, "", err
	}
	if selector == "" {
		png, err := runPage(ctx, p, chromedp.CaptureScreenshot())
		if err != nil {
			return nil, "", fmt.Errorf("screenshot: %w", err)
		}
		return png, "", nil
	}
	sel, err := s.locate(ctx, c, selector, true)
	if err != nil {
		return nil, "", err
	}
	png, err := runPage(ctx, p, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		return nil, "", fmt.Errorf("screenshot of %q: %w", sel, err)
	}
	return png, sel, nil
}

func browserImpls(m map[string]stepFunc) {
	m["browser.viewport"] = func(ctx context.Context, s *Session, c *call) error {
		w, err := c.int(0)
		if err != nil {
			return err
		}
		h, err := c.int(1)
		if err != nil {
			return err
		}
		if w < 100 || h < 100 || w > 7680 || h > 4320 {
			return fmt.Errorf("viewport %dx%d is out of range (100x100 to 7680x4320)", w, h)
		}
		p, err := s.browserPage(ctx)
		if err != nil {
			return err
		}
		if _, err := runPage(ctx, p, chromedp.EmulateViewport(w, h)); err != nil {
			return fmt.Errorf("set the viewport: %w", err)
		}
		p.width, p.height = int(w), int(h)
		return nil
	}
	m["browser.open"] = func(ctx context.Context, s *Session, c *call) error {
		u, err := s.resolveURL(c.str(0))
		if err != nil {
			return err
		}
		p, err := s.browserPage(ctx)
		if err != nil {
			return err
		}
		start := time.Now()
		resp, err := runPage(ctx, p, chromedp.NavigateResponse(u))
		refused := s.cfg.Browser.refusedSince(start)
		if err != nil && refused != "" {
			return fmt.Errorf("open %s: %s", u, refused)
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", u, err)
		}
		if refused != "" { // a subresource: the page opened without it
			c.rep.Log("warn", refused)
		}
		if resp != nil {
			c.rep.Log("info", fmt.Sprintf("opened %s → %d", u, resp.Status))
			if resp.Status >= 400 {
				return fmt.Errorf("open %s: the server answered %d %s", u, resp.Status, resp.StatusText)
			}
		}
		return nil
	}
	m["browser.click"] = func(ctx context.Context, s *Session, c *call) error {
		sel, err := s.locate(ctx, c, c.str(0), true)
		if err != nil {
			return err
		}
		p, _ := s.browserPage(ctx)
		if _, err := runPage(ctx, p, chromedp.Click(chromedp.CSS(sel))); err != nil {
			return fmt.Errorf("click %q: %w", sel, err)
		}
		return nil
	}
	m["browser.fill"] = func(ctx context.Context, s *Session, c *call) error {
		sel, err := s.locate(ctx, c, c.str(0), true)
		if err != nil {
			return err
		}
		p, _ := s.browserPage(ctx)
		if err := doPage(ctx, p, chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), c.str(1))); err != nil {
			return fmt.Errorf("fill %q: %w", sel, err)
		}
		return nil
	}
	m["browser.select"] = func(ctx context.Context, s *Session, c *call) error {
		sel, err := s.locate(ctx, c, c.str(1), true)
		if err != nil {
			return err
		}
		p, _ := s.browserPage(ctx)
		js := `(function (sel, want) {
  const el = document.querySelector(sel);
  if (!el || el.tagName !== 'SELECT') return 'not a select element';
  const opts = Array.from(el.options);
  const o = opts.find(o => o.value === want) || opts.find(o => o.text.trim() === want);
  if (!o) return 'has no option ' + JSON.stringify(want) + ' (options: ' + opts.map(o => JSON.stringify(o.text.trim())).join(', ') + ')';
  el.value = o.value;
  el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return '';
})(` + jsString(sel) + `, ` + jsString(c.str(0)) + `)`
		msg, err := runPage(ctx, p, chromedp.Evaluate[string](js))
		if err != nil {
			return fmt.Errorf("select in %q: %w", sel, err)
		}
		if msg != "" {
			return fmt.Errorf("select %q in %q: the element %s", c.str(0), sel, msg)
		}
		return nil
	}
	m["browser.press"] = func(ctx context.Context, s *Session, c *call) error {
		key := c.str(0)
		if k, ok := keyNames[strings.ToLower(key)]; ok {
			key = k
		} else if len([]rune(key)) != 1 {
			return fmt.Errorf("unknown key %q: use Enter, Tab, Escape, Backspace, Delete, Space, Arrow{Up,Down,Left,Right}, Home, End, PageUp, PageDown or one character", key)
		}
		p, err := s.browserPage(ctx)
		if err != nil {
			return err
		}
		if _, err := runPage(ctx, p, chromedp.KeyEvent(key)); err != nil {
			return fmt.Errorf("press %q: %w", c.str(0), err)
		}
		return nil
	}
	m["browser.wait_for"] = func(ctx context.Context, s *Session, c *call) error {
		_, err := s.locate(ctx, c, c.str(0), true)
		return err
	}
	pageText := func(ctx context.Context, p *page) (string, error) {
		return runPage(ctx, p, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	}
	m["browser.see_text"] = func(ctx context.Context, s *Session, c *call) error {
		p, err := s.browserPage(ctx)
		if err != nil {
			return err
		}
		var last string
		return s.waitFor(ctx, func() (bool, error) {
			t, err := pageText(ctx, p)
			last = t
			return strings.Contains(t, c.str(0)), err
		}, func() string {
			return fmt.Sprintf("the page does not show %q (its text begins %q)", c.str(0), truncate(last, 200))
		})
	}
	m["browser.see_text_in"] = func(ctx context.Context, s *Session, c *call) error {
		sel, err := s.locate(ctx, c, c.str(1), true)
		if err != nil {
			return err
		}
		p, _ := s.browserPage(ctx)
		var last string
		return s.waitFor(ctx, func() (bool, error) {
			t, err := runPage(ctx, p, chromedp.Evaluate[string](`(function(){const e=document.querySelector(`+jsString(sel)+`);return e?e.innerText:""})()`))
			last = t
			return strings.Contains(t, c.str(0)), err
		}, func() string {
			return fmt.Sprintf("%q shows %q, not %q", sel, truncate(last, 200), c.str(0))
		})
	}
	m["browser.not_see_text"] = func(ctx context.Context, s *Session, c *call) error {
		p, err := s.browserPage(ctx)
		if err != nil {
			return err
		}
		t, err := pageText(ctx, p)
		if err != nil {
			return err
		}
		if strings.Contains(t, c.str(0)) {
			return fmt.Errorf("the page shows %q", c.str(0))
		}
		return nil
	}
	m["browser.title"] = func(ctx context.Context, s *Session, c *call) error {
		p, err := s.browserPage(ctx)
		if err != nil {
			return err
		}
		var last string
		return s.waitFor(ctx, func() (bool, error) {
			t, err := runPage(ctx, p, chromedp.Title())
			last = t
			return t == c.str(0), err
		}, func() string { return fmt.Sprintf("the page title is %q, expected %q", last, c.str(0)) })
	}
	m["browser.url_contains"] = func(ctx context.Context, s *Session, c *call) error {
		p, err := s.browserPage(ctx)
		if err != nil {
			return err
		}
		var last string
		return s.waitFor(ctx, func() (bool, error) {
			u, err := runPage(ctx, p, chromedp.Location())
			last = u
			return strings.Contains(u, c.str(0)), err
		}, func() string { return fmt.Sprintf("the page URL is %q, which does not contain %q", last, c.str(0)) })
	}
	m["browser.value_is"] = func(ctx context.Context, s *Session, c *call) error {
		sel, err := s.locate(ctx, c, c.str(0), false)
		if err != nil {
			return err
		}
		p, _ := s.browserPage(ctx)
		v, err := runPage(ctx, p, chromedp.Evaluate[string](`(function(){const e=document.querySelector(`+jsString(sel)+`);return e&&('value' in e)?String(e.value):""})()`))
		if err != nil {
			return err
		}
		if v != c.str(1) {
			return fmt.Errorf("the field %q has the value %q, expected %q", sel, v, c.str(1))
		}
		return nil
	}
	m["browser.store_text"] = func(ctx context.Context, s *Session, c *call) error {
		sel, err := s.locate(ctx, c, c.str(0), true)
		if err != nil {
			return err
		}
		p, _ := s.browserPage(ctx)
		t, err := runPage(ctx, p, chromedp.Evaluate[string](`(function(){const e=document.querySelector(`+jsString(sel)+`);return e?e.innerText.trim():""})()`))
		if err != nil {
			return err
		}
		s.vars.Set(c.str(1), t)
		return nil
	}
	m["browser.screenshot"] = func(ctx context.Context, s *Session, c *call) error {
		png, _, err := s.screenshot(ctx, c, "")
		if err != nil {
			return err
		}
		c.rep.Attach(Attachment{Name: "screenshot.png", MediaType: "image/png", Data: png})
		return nil
	}
	m["browser.screenshot_named"] = func(ctx context.Context, s *Session, c *call) error {
		png, _, err := s.screenshot(ctx, c, "")
		if err != nil {
			return err
		}
		name := c.str(0)
		if !strings.HasSuffix(strings.ToLower(name), ".png") {
			name += ".png"
		}
		c.rep.Attach(Attachment{Name: name, MediaType: "image/png", Data: png})
		return nil
	}
	visual := func(ctx context.Context, s *Session, c *call, selector, name string) error {
		if strings.TrimSpace(name) == "" {
			return errors.New("a baseline needs a name")
		}
		p, err := s.browserPage(ctx)
		if err != nil {
			return err
		}
		// A blinking caret or a running animation would make two captures of one page differ.
		if _, err := runPage(ctx, p, chromedp.Evaluate[chromedp.Void](stableCSS)); err != nil {
			return fmt.Errorf("prepare the page for a visual check: %w", err)
		}
		png, sel, err := s.screenshot(ctx, c, selector)
		if err != nil {
			return err
		}
		v := VisualCheck{
			Name: name, Browser: s.cfg.Browser.Name(), Viewport: fmt.Sprintf("%dx%d", p.width, p.height),
			Selector: sel, MediaType: "image/png", Image: png,
		}
		if s.cfg.Baselines == nil {
			c.rep.VisualCheck(v)
			return nil
		}
		res, err := s.cfg.Baselines.CheckBaseline(ctx, v)
		if err != nil {
			c.rep.VisualCheck(v)
			return fmt.Errorf("compare with the baseline %q: %w", name, err)
		}
		v.Result = &res
		c.rep.VisualCheck(v)
		if res.Status == VisualFailed {
			if res.SizeMismatch {
				return fmt.Errorf("the capture differs from the baseline %q in size: %d pixels (%.2f%%) differ", name, res.MismatchPixels, 100*res.MismatchRatio)
			}
			return fmt.Errorf("the capture differs from the baseline %q: %d pixels (%.2f%%) differ at threshold %g", name, res.MismatchPixels, 100*res.MismatchRatio, res.Threshold)
		}
		return nil
	}
	m["browser.visual_check"] = func(ctx context.Context, s *Session, c *call) error {
		return visual(ctx, s, c, "", c.str(0))
	}
	m["browser.visual_check_element"] = func(ctx context.Context, s *Session, c *call) error {
		return visual(ctx, s, c, c.str(0), c.str(1))
	}
}

// stableCSS hides the text caret and stops animations and transitions before a visual capture.
const stableCSS = `(function () {
  if (document.getElementById('sdods-stable')) return;
  const st = document.createElement('style');
  st.id = 'sdods-stable';
  st.textContent = '*, *::before, *::after { caret-color: transparent !important; animation: none !important; transition: none !important; }';
  (document.head || document.documentElement).appendChild(st);
})()`

func doPage(ctx context.Context, p *page, actions ...chromedp.Action[chromedp.Void]) error {
	_, err := runPage(ctx, p, chromedp.Steps(actions...))
	return err
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
