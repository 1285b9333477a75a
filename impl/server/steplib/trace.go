package steplib

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TraceVersion is the version of the trace manifest format (TraceManifest).
const TraceVersion = 1

// TraceLimits bound what a Recorder keeps, so that recording costs stay bounded whatever a page does.
type TraceLimits struct {
	// DOMBytes caps one DOM snapshot (default 1 MiB); a larger snapshot is cut and marked.
	DOMBytes int
	// BodyBytes caps a recorded body: an HTTP step's request and response, a failed browser
	// request's response (default 64 KiB).
	BodyBytes int
	// TargetBytes caps the HTML of the element a step acted on (default 4 KiB).
	TargetBytes int
	// Console and Requests cap the console messages and network requests kept per step (200 each).
	Console, Requests int
	// FileBytes caps the screenshots and snapshots of one scenario attempt (default 24 MiB); past
	// it, steps keep their console, network and timings but no more files.
	FileBytes int
	// JPEGQuality is the quality of the before/after screenshots (default 70).
	JPEGQuality int64
}

func (l TraceLimits) withDefaults() TraceLimits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.DOMBytes, 1<<20)
	def(&l.BodyBytes, 64<<10)
	def(&l.TargetBytes, 4<<10)
	def(&l.Console, 200)
	def(&l.Requests, 200)
	def(&l.FileBytes, 24<<20)
	if l.JPEGQuality <= 0 || l.JPEGQuality > 100 {
		l.JPEGQuality = 70
	}
	return l
}

// TraceManifest is the trace of one attempt of a scenario: its steps with what the browser and
// HTTP did during each. Files (screenshots, DOM snapshots) are named, stored beside it.
type TraceManifest struct {
	Version int    `json:"version"`
	Attempt int    `json:"attempt"`
	Status  string `json:"status"`
	// Files is "full" when the screenshots and snapshots were kept, "summary" when only this
	// manifest was (tracing on_failure, an attempt that did not fail).
	Files string      `json:"files"`
	Steps []TraceStep `json:"steps"`
}

// TraceStep is what happened during one step.
type TraceStep struct {
	Index      int       `json:"index"`
	Keyword    string    `json:"keyword"`
	Text       string    `json:"text"`
	Definition string    `json:"definition,omitempty"`
	Kind       string    `json:"kind"` // browser, http or other
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"startedAt"`
	DurationMs int64     `json:"durationMs"`
	// Before and After name the screenshots (JPEG) taken around a browser step; DOM names the
	// page's snapshot after it (HTML without scripts, inert).
	Before  string          `json:"before,omitempty"`
	After   string          `json:"after,omitempty"`
	DOM     string          `json:"dom,omitempty"`
	URL     string          `json:"url,omitempty"`
	Target  *TraceTarget    `json:"target,omitempty"`
	Console []TraceConsole  `json:"console"`
	Network []*TraceRequest `json:"network"`
	HTTP    *TraceHTTP      `json:"http,omitempty"`
	// Notes say what a limit cut.
	Notes []string `json:"notes,omitempty"`
}

// TraceTarget is the element a browser step acted on: its selector (the healed one when a heal
// happened) and its HTML, capped, empty when the page had no such element.
type TraceTarget struct {
	Selector string `json:"selector"`
	HTML     string `json:"html,omitempty"`
}

// TraceConsole is a console message or an uncaught exception of the page.
type TraceConsole struct {
	At    time.Time `json:"at"`
	Level string    `json:"level"` // log, info, warning, error, debug; exception
	Text  string    `json:"text"`
}

// TraceRequest is a request of the page.
type TraceRequest struct {
	At            time.Time `json:"at"`
	Method        string    `json:"method"`
	URL           string    `json:"url"`
	Type          string    `json:"type,omitempty"`
	Status        int       `json:"status,omitempty"`
	StatusText    string    `json:"statusText,omitempty"`
	MimeType      string    `json:"mimeType,omitempty"`
	DurationMs    *float64  `json:"durationMs,omitempty"`
	RequestBytes  int       `json:"requestBytes,omitempty"`
	ResponseBytes int       `json:"responseBytes,omitempty"`
	// Failure is the network error of a request that got no response.
	Failure string `json:"failure,omitempty"`
	// ResponseBody is kept for a failed request only (status ≥ 400), capped and redacted.
	ResponseBody string `json:"responseBody,omitempty"`

	id    network.RequestID
	start float64 // monotonic seconds
	done  bool
}

// TraceHTTP is an HTTP step's request and response, capped and redacted.
type TraceHTTP struct {
	Method          string            `json:"method"`
	URL             string            `json:"url"`
	RequestHeaders  map[string]string `json:"requestHeaders,omitempty"`
	RequestBody     string            `json:"requestBody,omitempty"`
	Status          int               `json:"status,omitempty"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	ResponseBody    string            `json:"responseBody,omitempty"`
	DurationMs      int64             `json:"durationMs"`
	Error           string            `json:"error,omitempty"`
}

// TraceFile is a file of a trace: a screenshot or a DOM snapshot.
type TraceFile struct {
	Name      string
	MediaType string
	Data      []byte
}

// Recorder records the trace of one attempt of a scenario; give it to the session in
// Config.Recorder. It is safe for the browser's event goroutines to feed it while a step runs.
type Recorder struct {
	lim TraceLimits

	mu        sync.Mutex
	steps     []*TraceStep
	cur       *TraceStep
	files     []TraceFile
	fileBytes int
	pending   map[network.RequestID]*TraceRequest
	seen      map[network.RequestID]bool // requests whose response body was read or refused
}

// NewRecorder returns a recorder bounded by lim (zero members take their defaults).
func NewRecorder(lim TraceLimits) *Recorder {
	// pending and seen are made at a browser step's first request: an HTTP scenario has none.
	return &Recorder{lim: lim.withDefaults()}
}

// Manifest returns the attempt's manifest (files "full") and its files. Recorded text is masked
// where it is taken; the caller masks the serialised manifest and the snapshots again, as it
// does attachments.
func (r *Recorder) Manifest(attempt int, status string) (TraceManifest, []TraceFile) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := TraceManifest{Version: TraceVersion, Attempt: attempt, Status: status, Files: "full", Steps: make([]TraceStep, 0, len(r.steps))}
	for _, st := range r.steps {
		c := *st
		c.Network = make([]*TraceRequest, len(st.Network))
		for i, q := range st.Network {
			cq := *q
			c.Network[i] = &cq
		}
		m.Steps = append(m.Steps, c)
	}
	return m, r.files
}

// Summary strips the manifest of its files: what tracing on_failure keeps of an attempt that did
// not fail.
func (m TraceManifest) Summary() TraceManifest {
	m.Files = "summary"
	steps := make([]TraceStep, len(m.Steps))
	for i, st := range m.Steps {
		st.Before, st.After, st.DOM = "", "", ""
		steps[i] = st
	}
	m.Steps = steps
	return m
}

func (r *Recorder) begin(step Step, defID, kind string) *TraceStep {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := &TraceStep{Index: len(r.steps), Keyword: step.Keyword, Text: step.Text, Definition: defID, Kind: kind,
		StartedAt: time.Now().UTC(), Console: []TraceConsole{}, Network: []*TraceRequest{}}
	r.steps = append(r.steps, st)
	r.cur = st
	return st
}

// previous returns the step recorded right before st, or nil.
func (r *Recorder) previous(st *TraceStep) *TraceStep {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st.Index < 1 || st.Index > len(r.steps) {
		return nil
	}
	return r.steps[st.Index-1]
}

func (r *Recorder) end(st *TraceStep, out Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st.Status, st.Error, st.DurationMs = string(out.Status), out.Error, out.Duration.Milliseconds()
}

// addFile keeps a file of step st under a name of its own, unless the attempt's file budget is spent.
func (r *Recorder) addFile(st *TraceStep, suffix, mediaType string, data []byte) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fileBytes+len(data) > r.lim.FileBytes {
		st.Notes = append(st.Notes, fmt.Sprintf("%s not kept: the scenario's trace files reached %d bytes", suffix, r.lim.FileBytes))
		return ""
	}
	r.fileBytes += len(data)
	name := fmt.Sprintf("s%03d-%s", st.Index, suffix)
	r.files = append(r.files, TraceFile{Name: name, MediaType: mediaType, Data: data})
	return name
}

// event takes a browser event of the session's tab (called on chromedp's goroutine: no command here).
func (r *Recorder) event(ev any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.cur
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if st == nil || len(st.Console) >= r.lim.Console {
			return
		}
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, remoteText(a))
		}
		st.Console = append(st.Console, TraceConsole{At: time.Now().UTC(), Level: string(e.Type), Text: capText(strings.Join(parts, " "), r.lim.BodyBytes)})
	case *runtime.EventExceptionThrown:
		if st == nil || len(st.Console) >= r.lim.Console || e.ExceptionDetails == nil {
			return
		}
		text := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil && e.ExceptionDetails.Exception.Description != "" {
			text += " " + e.ExceptionDetails.Exception.Description
		}
		st.Console = append(st.Console, TraceConsole{At: time.Now().UTC(), Level: "exception", Text: capText(text, r.lim.BodyBytes)})
	case *network.EventRequestWillBeSent:
		if st == nil || e.Request == nil {
			return
		}
		if len(st.Network) >= r.lim.Requests {
			return
		}
		q := &TraceRequest{id: e.RequestID, Method: e.Request.Method, URL: capText(e.Request.URL, 2048), Type: string(e.Type), start: float64(e.Timestamp)}
		if e.WallTime > 0 {
			q.At = time.UnixMilli(int64(float64(e.WallTime) * 1000)).UTC()
		} else {
			q.At = time.Now().UTC()
		}
		for _, p := range e.Request.PostDataEntries {
			q.RequestBytes += len(p.Bytes)
		}
		if old := r.pending[e.RequestID]; old != nil && e.RedirectResponse != nil {
			old.Status, old.StatusText, old.done = int(e.RedirectResponse.Status), e.RedirectResponse.StatusText, true
			d := (float64(e.Timestamp) - old.start) * 1000
			old.DurationMs = &d
		}
		if r.pending == nil {
			r.pending = map[network.RequestID]*TraceRequest{}
		}
		r.pending[e.RequestID] = q
		st.Network = append(st.Network, q)
	case *network.EventResponseReceived:
		if q := r.pending[e.RequestID]; q != nil && e.Response != nil {
			q.Status, q.StatusText, q.MimeType = int(e.Response.Status), e.Response.StatusText, e.Response.MimeType
		}
	case *network.EventLoadingFinished:
		if q := r.pending[e.RequestID]; q != nil {
			d := (float64(e.Timestamp) - q.start) * 1000
			q.DurationMs, q.ResponseBytes, q.done = &d, int(e.EncodedDataLength), true
		}
	case *network.EventLoadingFailed:
		if q := r.pending[e.RequestID]; q != nil {
			d := (float64(e.Timestamp) - q.start) * 1000
			q.DurationMs, q.Failure, q.done = &d, e.ErrorText, true
			delete(r.pending, e.RequestID)
		}
	}
}

// failedUnread returns the finished requests that failed (status ≥ 400) whose body was not read yet.
func (r *Recorder) failedUnread() []*TraceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*TraceRequest
	for id, q := range r.pending {
		if q.done && q.Status >= 400 && !r.seen[id] {
			if r.seen == nil {
				r.seen = map[network.RequestID]bool{}
			}
			r.seen[id] = true
			out = append(out, q)
		}
	}
	return out
}

func (r *Recorder) setBody(q *TraceRequest, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q.ResponseBody = body
}

// setHTTP keeps the HTTP exchange of the step in progress (its last one, when it sent several).
func (r *Recorder) setHTTP(h *TraceHTTP) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.cur.HTTP = h
	}
}

func maskHeaders(v *Variables, h map[string]string) map[string]string {
	for k, val := range h {
		h[k] = v.Mask(val)
	}
	return h
}

func remoteText(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	if len(o.Value) > 0 {
		var v any
		if json.Unmarshal(o.Value, &v) == nil {
			if s, ok := v.(string); ok {
				return s
			}
		}
		return string(o.Value)
	}
	if o.UnserializableValue != "" {
		return string(o.UnserializableValue)
	}
	if o.Description != "" {
		return o.Description
	}
	return string(o.Type)
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d bytes cut]", len(s)-cut)
}

// secretHeaders are recorded as *** whatever their value.
var secretHeaders = map[string]bool{"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "Set-Cookie": true}

func traceHeaders(h http.Header) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, vs := range h {
		if secretHeaders[http.CanonicalHeaderKey(k)] {
			out[k] = "***"
			continue
		}
		out[k] = strings.Join(vs, ", ")
	}
	return out
}

// stepKind is the kind of a definition's step in a trace.
func stepKind(defID string) string {
	switch {
	case strings.HasPrefix(defID, "browser."):
		return "browser"
	case strings.HasPrefix(defID, "http."):
		return "http"
	}
	return "other"
}

// traceBefore records what comes before a step: for a browser step with a page open, a
// screenshot and the acted-on element.
func (s *Session) traceBefore(ctx context.Context, st *TraceStep, c *call) {
	if st.Kind != "browser" || s.page == nil {
		return
	}
	// Nothing runs on the page between two steps: the screenshot after the previous step is the
	// one before this step, and taking it again would double the cost of recording.
	if prev := s.cfg.Recorder.previous(st); prev != nil && prev.Kind == "browser" && prev.After != "" {
		st.Before = prev.After
	} else if shot, err := s.traceShot(ctx); err == nil {
		st.Before = s.cfg.Recorder.addFile(st, "before.jpg", "image/jpeg", shot)
	}
	if sel := targetSelector(c); sel != "" {
		st.Target = &TraceTarget{Selector: sel, HTML: s.targetHTML(ctx, sel)}
	}
}

// traceAfter records what comes after a step: the screenshot, the DOM snapshot, the page's
// address, the acted-on element as it is now, and the bodies of failed requests.
func (s *Session) traceAfter(ctx context.Context, st *TraceStep, c *call) {
	rec := s.cfg.Recorder
	if st.Kind != "browser" || s.page == nil {
		return
	}
	// The step's context may have ended (a failed step timed out): record under a short one of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if shot, err := s.traceShot(ctx); err == nil {
		st.After = rec.addFile(st, "after.jpg", "image/jpeg", shot)
	}
	if u, err := runPage(ctx, s.page, chromedp.Location()); err == nil {
		st.URL = u
	}
	if html, err := runPage(ctx, s.page, chromedp.Evaluate[string](domSnapshotJS(rec.lim.DOMBytes))); err == nil && html != "" {
		st.DOM = rec.addFile(st, "dom.html", "text/html", []byte(html))
	}
	if sel := targetSelector(c); sel != "" {
		if h := s.targetHTML(ctx, sel); h != "" || st.Target == nil {
			st.Target = &TraceTarget{Selector: sel, HTML: h}
		}
	}
	for _, q := range rec.failedUnread() {
		res, err := runPage(ctx, s.page, func(ctx context.Context, t *chromedp.Target) (network.GetResponseBodyResult, error) {
			return cdp.Call(ctx, t, network.GetResponseBody, network.GetResponseBodyParams{RequestID: q.id})
		})
		if err != nil {
			continue
		}
		rec.setBody(q, capText(s.vars.Mask(string(res.Body)), rec.lim.BodyBytes))
	}
}

func (s *Session) traceShot(ctx context.Context) ([]byte, error) {
	q := s.cfg.Recorder.lim.JPEGQuality
	return runPage(ctx, s.page, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		r, err := cdp.Call(ctx, t, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{Format: cdppage.CaptureScreenshotFormatJpeg, Quality: &q})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	})
}

func (s *Session) targetHTML(ctx context.Context, sel string) string {
	js := `(function(){const e=document.querySelector(` + jsString(sel) + `);if(!e)return "";const c=e.cloneNode(true);` +
		`c.querySelectorAll&&c.querySelectorAll("script").forEach(x=>x.remove());return c.outerHTML})()`
	h, err := runPage(ctx, s.page, chromedp.Evaluate[string](js))
	if err != nil {
		return ""
	}
	return capText(s.vars.Mask(h), s.cfg.Recorder.lim.TargetBytes)
}

// targetSelector is the selector a browser step acts on (its first selector parameter), the
// healed one when the session healed it.
func targetSelector(c *call) string {
	if c == nil {
		return ""
	}
	i := 0
	for _, p := range c.def.Parameters {
		if p.Type == "docstring" || p.Type == "datatable" {
			continue
		}
		if p.Type == "selector" && i < len(c.args) {
			return c.str(i)
		}
		i++
	}
	return ""
}

// domSnapshotJS serialises the page as inert HTML: scripts, event handlers, javascript: URLs,
// frames, objects and <base> removed; the stylesheets the page can read inlined into one
// <style>; form values written into attributes; cut at limit bytes.
func domSnapshotJS(limit int) string {
	return `(function(limit){
  const root = document.documentElement; if (!root) return "";
  let css = "";
  for (const sh of Array.from(document.styleSheets)) {
    try { for (const r of Array.from(sh.cssRules)) css += r.cssText + "\n"; } catch (e) {}
  }
  const live = Array.from(root.querySelectorAll("input,textarea,select"));
  const c = root.cloneNode(true);
  const copies = Array.from(c.querySelectorAll("input,textarea,select"));
  copies.forEach((el, i) => {
    const src = live[i]; if (!src) return;
    if (el.tagName === "INPUT") {
      if (src.type === "checkbox" || src.type === "radio") { if (src.checked) el.setAttribute("checked", ""); else el.removeAttribute("checked"); }
      else if (src.type !== "password") el.setAttribute("value", src.value); else el.setAttribute("value", "");
    } else if (el.tagName === "TEXTAREA") el.textContent = src.value;
    else Array.from(el.options).forEach((o, j) => { if (src.options[j] && src.options[j].selected) o.setAttribute("selected", ""); else o.removeAttribute("selected"); });
  });
  c.querySelectorAll("script,noscript,iframe,frame,frameset,object,embed,base,link,meta[http-equiv],template,portal").forEach(e => e.remove());
  c.querySelectorAll("*").forEach(e => {
    for (const a of Array.from(e.attributes)) {
      const n = a.name.toLowerCase(), v = a.value.trim().toLowerCase();
      if (n.startsWith("on") || n === "srcdoc" || n === "nonce" || ((n === "href" || n === "src" || n === "action" || n === "formaction" || n === "xlink:href") && (v.startsWith("javascript:") || v.startsWith("vbscript:")))) e.removeAttribute(a.name);
    }
  });
  const head = c.querySelector("head") || c.insertBefore(document.createElement("head"), c.firstChild);
  const st = document.createElement("style"); st.textContent = css; head.appendChild(st);
  let out = "<!doctype html>" + c.outerHTML;
  if (out.length > limit) out = out.slice(0, limit) + "<!-- sdods: snapshot cut at " + limit + " characters -->";
  return out;
})(` + fmt.Sprint(limit) + `)`
}
