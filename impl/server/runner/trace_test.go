package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/steplib"
)

// tracedApp serves /shop (console messages, a fetch of /api/items that fails with 500, a script
// and an inline handler, and the button #pay unless broken), /flaky (broken on its first visit
// only) and POST /echo (answers the request's body).
func tracedApp(t *testing.T, broken *atomic.Bool) *httptest.Server {
	var visits atomic.Int32
	page := func(w http.ResponseWriter, ok bool) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		button := `<button id="pay" onclick="document.getElementById('out').textContent='Paid'">Pay</button>`
		if !ok {
			button = `<p>Sold out</p>`
		}
		fmt.Fprintf(w, `<!doctype html><html><head><style>h1{color:rgb(10,120,40)}</style></head><body><h1>Basket</h1>%s<p id="out"></p>
<input id="pw" type="password"><script>console.log('shop loaded'); fetch('/api/items').then(function(r){ if(!r.ok) console.error('items failed: '+r.status) });</script></body></html>`, button)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /shop", func(w http.ResponseWriter, r *http.Request) { page(w, !broken.Load()) })
	mux.HandleFunc("GET /flaky", func(w http.ResponseWriter, r *http.Request) { page(w, visits.Add(1) > 1) })
	mux.HandleFunc("GET /api/items", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":"items exploded"}`)
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

const tracedFeature = `Feature: Traced

  Scenario: Pays
    Given I set the header "Authorization" to "Bearer ${token}"
    When I send a POST request to "/echo"
      """json
      {"token": "${token}"}
      """
    And I open "%s"
    And I click "#pay"
    Then I should see "Paid"
`

const traceSecret = "s3cr3t-token-value"

type keptTrace struct {
	manifests map[string]steplib.TraceManifest
	files     map[string][]byte
}

func runTraced(t *testing.T, app string, mode runner.Tracing, path string, retries int) (*runner.Result, keptTrace) {
	t.Helper()
	rec := &recorder{}
	r := runner.New(runner.Config{Egress: loopback(t), WaitTimeout: 2 * time.Second, HealDelay: 200 * time.Millisecond})
	res, err := r.Run(context.Background(), runner.Run{ID: "run-trace", Project: "demo", Retries: retries, Tracing: mode,
		Features:    map[string]string{"traced.feature": fmt.Sprintf(tracedFeature, path)},
		Environment: runner.Environment{BaseURL: app, Secrets: map[string]string{"token": traceSecret}}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	kept := keptTrace{manifests: map[string]steplib.TraceManifest{}, files: map[string][]byte{}}
	for _, e := range rec.ofType(runner.EventAttachment) {
		a := e.Attachment
		if !strings.HasPrefix(a.Name, "trace-a") {
			continue
		}
		if e.Step != nil {
			t.Errorf("the trace file %s is attached to step %d", a.Name, *e.Step)
		}
		if bytes.Contains(a.Data, []byte(traceSecret)) {
			t.Errorf("the trace file %s holds the secret", a.Name)
		}
		if strings.HasSuffix(a.Name, ".json") {
			var m steplib.TraceManifest
			if err := json.Unmarshal(a.Data, &m); err != nil {
				t.Fatalf("%s: %v", a.Name, err)
			}
			kept.manifests[a.Name] = m
		} else {
			kept.files[a.Name] = a.Data
		}
	}
	return res, kept
}

// TestTraceModes runs a passing and a failing browser scenario under each tracing mode and checks
// what is kept: nothing when off; the manifest alone for a passing attempt under on_failure;
// everything for a failed attempt, or always. A flaky scenario keeps its failed first attempt.
func TestTraceModes(t *testing.T) {
	needChromium(t)
	var broken atomic.Bool
	app := tracedApp(t, &broken)
	cases := []struct {
		name      string
		mode      runner.Tracing
		broken    bool
		path      string
		retries   int
		manifests map[string]string // name → files (full or summary)
	}{
		{name: "off keeps nothing", mode: runner.TracingOff, broken: true, path: "/shop", manifests: map[string]string{}},
		{name: "on_failure, passed: the manifest only", mode: runner.TracingOnFailure, path: "/shop", manifests: map[string]string{"trace-a1.json": "summary"}},
		{name: "on_failure, failed: everything", mode: runner.TracingOnFailure, broken: true, path: "/shop", manifests: map[string]string{"trace-a1.json": "full"}},
		{name: "always, passed: everything", mode: runner.TracingAlways, path: "/shop", manifests: map[string]string{"trace-a1.json": "full"}},
		{name: "on_failure, flaky: the failed first attempt is kept", mode: runner.TracingOnFailure, path: "/flaky", retries: 1,
			manifests: map[string]string{"trace-a1.json": "full", "trace-a2.json": "summary"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			broken.Store(c.broken)
			res, kept := runTraced(t, app.URL, c.mode, c.path, c.retries)
			sc := scenarios(res)[0]
			if want := c.broken; (sc.Status == steplib.StatusFailed) != want {
				t.Fatalf("scenario %s\n%s", sc.Status, describe(sc))
			}
			if len(kept.manifests) != len(c.manifests) {
				t.Fatalf("manifests %v, want %v", keys(kept.manifests), c.manifests)
			}
			for name, files := range c.manifests {
				m, ok := kept.manifests[name]
				if !ok || m.Files != files || m.Version != steplib.TraceVersion {
					t.Fatalf("%s: %+v", name, m)
				}
				for _, st := range m.Steps {
					for _, f := range []string{st.Before, st.After, st.DOM} {
						if f == "" {
							continue
						}
						if files == "summary" {
							t.Errorf("%s step %d names %s in a summary", name, st.Index, f)
						} else if _, ok := kept.files[f]; !ok {
							t.Errorf("%s step %d names %s, which was not kept", name, st.Index, f)
						}
					}
				}
			}
			if c.mode == runner.TracingOff && len(kept.files) > 0 {
				t.Errorf("off kept %d files", len(kept.files))
			}
		})
	}
}

// TestTraceRecording checks what a failed attempt's trace holds, step by step.
func TestTraceRecording(t *testing.T) {
	needChromium(t)
	var broken atomic.Bool
	broken.Store(true)
	app := tracedApp(t, &broken)
	_, kept := runTraced(t, app.URL, runner.TracingOnFailure, "/shop", 0)
	m, ok := kept.manifests["trace-a1.json"]
	if !ok || m.Status != "failed" || len(m.Steps) != 4 {
		t.Fatalf("manifest %+v", m)
	}
	header, post, open, click := m.Steps[0], m.Steps[1], m.Steps[2], m.Steps[3]
	if header.Kind != "http" || header.HTTP != nil || post.Kind != "http" || open.Kind != "browser" || click.Kind != "browser" || click.Status != "failed" || click.Error == "" {
		t.Fatalf("steps: %+v", m.Steps)
	}

	// The HTTP step: request and response, the secret masked, the Authorization header hidden.
	h := post.HTTP
	if h == nil || h.Method != "POST" || h.Status != 200 || h.RequestHeaders["Authorization"] != "***" ||
		h.RequestBody != `{"token": "***"}` || h.ResponseBody != `{"token": "***"}` || !strings.HasSuffix(h.URL, "/echo") {
		t.Fatalf("http: %+v", h)
	}

	// The browser steps: screenshots (JPEG), a DOM snapshot without script or handler, with the styles.
	if open.Before != "" || open.After == "" || click.Before == "" || click.After == "" {
		t.Errorf("screenshots: open %q/%q click %q/%q", open.Before, open.After, click.Before, click.After)
	}
	for _, name := range []string{open.After, click.Before, click.After} {
		if b := kept.files[name]; !bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}) {
			t.Errorf("%s is not a JPEG", name)
		}
	}
	dom := string(kept.files[click.DOM])
	if !strings.Contains(dom, "Sold out") || !strings.Contains(dom, "rgb(10, 120, 40)") || strings.Contains(strings.ToLower(dom), "<script") ||
		strings.Contains(dom, "onclick") {
		t.Errorf("DOM snapshot: %.600s", dom)
	}
	if !strings.HasSuffix(open.URL, "/shop") {
		t.Errorf("url %q", open.URL)
	}

	// The acted-on element: missing on the broken page.
	if click.Target == nil || click.Target.Selector != "#pay" || click.Target.HTML != "" {
		t.Errorf("target %+v", click.Target)
	}

	// Console and network: over both browser steps (a late answer lands in the step it began in,
	// a late console line in the step running then).
	var console []string
	for _, st := range []steplib.TraceStep{open, click} {
		for _, c := range st.Console {
			console = append(console, c.Level+": "+c.Text)
		}
	}
	joined := strings.Join(console, "\n")
	if !strings.Contains(joined, "log: shop loaded") || !strings.Contains(joined, "error: items failed: 500") {
		t.Errorf("console:\n%s", joined)
	}
	var page, items *steplib.TraceRequest
	for _, q := range open.Network {
		switch {
		case strings.HasSuffix(q.URL, "/shop"):
			page = q
		case strings.HasSuffix(q.URL, "/api/items"):
			items = q
		}
	}
	if page == nil || page.Status != 200 || page.Method != "GET" || page.DurationMs == nil || page.ResponseBytes == 0 || page.ResponseBody != "" {
		t.Errorf("the page's request: %+v", page)
	}
	if items == nil || items.Status != 500 || items.ResponseBody != `{"error":"items exploded"}` {
		t.Errorf("the failed fetch: %+v", items)
	}
}

// TestTraceLimits checks the caps: a snapshot cut at the limit, files past the budget dropped with a note.
func TestTraceLimits(t *testing.T) {
	needChromium(t)
	var broken atomic.Bool
	app := tracedApp(t, &broken)
	// A budget smaller than two screenshots, so that some file is dropped whatever the JPEG sizes.
	rec := steplib.NewRecorder(steplib.TraceLimits{DOMBytes: 200, FileBytes: 8 << 10})
	b := steplib.NewBrowser(steplib.BrowserOptions{Egress: loopback(t)})
	defer b.Close()
	s := steplib.NewSession(steplib.Config{BaseURL: app.URL, Browser: b, Recorder: rec, WaitTimeout: 2 * time.Second})
	ctx := context.Background()
	for _, text := range []string{`I open "/shop"`, `I click "#pay"`, `I should see "Paid"`} {
		if out := s.Execute(ctx, steplib.Step{Keyword: "When ", Text: text}, nil); out.Status != steplib.StatusPassed {
			t.Fatalf("%s: %s %s", text, out.Status, out.Error)
		}
	}
	s.Finish(ctx, true)
	m, files := rec.Manifest(1, "passed")
	total := 0
	for _, f := range files {
		total += len(f.Data)
		if f.MediaType == "text/html" && (len(f.Data) > 200+100 || !strings.Contains(string(f.Data), "snapshot cut at 200")) {
			t.Errorf("snapshot %s: %d bytes %.300q", f.Name, len(f.Data), f.Data)
		}
	}
	if total > 8<<10 {
		t.Errorf("%d bytes of files past a budget of %d", total, 8<<10)
	}
	notes := 0
	for _, st := range m.Steps {
		notes += len(st.Notes)
	}
	if notes == 0 {
		t.Errorf("no step says a file was dropped (%d files, %d bytes)", len(files), total)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
