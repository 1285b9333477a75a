package runner_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/steplib"
)

// webApp is the local application the features test: an HTML form and a JSON API.
type webApp struct {
	*httptest.Server
	// version 2 renames the submit button's id, so that "#submit" stops matching.
	version atomic.Int32
	mu      sync.Mutex
	users   map[string]string // id → name
}

func newWebApp(t testing.TB) *webApp {
	t.Helper()
	a := &webApp{users: map[string]string{"1": "Ada"}}
	a.version.Store(1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		buttonID := "submit"
		if a.version.Load() == 2 {
			buttonID = "send-button"
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html>
<html><head><title>Sign in</title>
<style>body{font-family:sans-serif;margin:40px} .toast{display:none}</style></head>
<body>
<h1>Sign in</h1>
<form id="login" action="/login" method="post">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" data-testid="email-input" placeholder="you@example.test">
  <label for="country">Country</label>
  <select id="country" name="country">
    <option value="">Choose…</option>
    <option value="de">Germany</option>
    <option value="fr">France</option>
  </select>
  <button id="%s" data-testid="submit-btn" type="submit">Sign in</button>
</form>
<div class="toast">never shown</div>
</body></html>`, buttonID)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Dashboard</title></head>
<body><h1 id="greeting">Welcome, %s</h1><p id="country">Country: %s</p></body></html>`,
			html.EscapeString(r.PostForm.Get("email")), html.EscapeString(r.PostForm.Get("country")))
	})
	mux.HandleFunc("GET /api/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		name, ok := a.users[r.PathValue("id")]
		a.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "not_found"}})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": json.Number(r.PathValue("id")), "name": name, "tags": []string{"admin", "dev"},
			"address": map[string]any{"city": "London", "zip": "N1"},
		})
	})
	mux.HandleFunc("POST /api/users", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Name string `json:"name"`
		}
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&body) != nil || body.Name == "" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "a JSON body with a name is required"})
			return
		}
		if r.Header.Get("X-Tenant") != "acme" {
			writeJSON(w, http.StatusForbidden, map[string]any{"error": "tenant header missing"})
			return
		}
		a.mu.Lock()
		id := fmt.Sprint(len(a.users) + 1)
		a.users[id] = body.Name
		a.mu.Unlock()
		w.Header().Set("Location", "/api/users/"+id)
		writeJSON(w, http.StatusCreated, map[string]any{"id": json.Number(id), "name": body.Name})
	})
	mux.HandleFunc("GET /api/me", func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || p != "pw-"+u {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "bad credentials"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"username": u})
	})
	mux.HandleFunc("GET /api/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// recorder is an Events sink that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []runner.Event
}

func (r *recorder) Emit(e runner.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) all() []runner.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]runner.Event(nil), r.events...)
}

func (r *recorder) ofType(t runner.EventType) []runner.Event {
	var out []runner.Event
	for _, e := range r.all() {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

// needChromium skips a browser test when no Chromium is installed.
func needChromium(t testing.TB) {
	t.Helper()
	if _, err := steplib.FindChromium(""); err != nil {
		t.Skipf("browser test skipped: %v", err)
	}
}

// scenarios flattens a result tree.
func scenarios(res *runner.Result) []runner.ScenarioResult {
	var out []runner.ScenarioResult
	for _, m := range res.Modules {
		for _, f := range m.Features {
			out = append(out, f.Scenarios...)
		}
	}
	return out
}

func scenarioNamed(t testing.TB, res *runner.Result, name string) runner.ScenarioResult {
	t.Helper()
	for _, s := range scenarios(res) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %q in the result", name)
	return runner.ScenarioResult{}
}

// describe renders a scenario's steps for failure messages.
func describe(s runner.ScenarioResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %q: %s %s\n", s.Name, s.Status, s.Error)
	for _, st := range s.Steps {
		fmt.Fprintf(&b, "  %s%s: %s %s %s\n", st.Keyword, st.Text, st.Status, st.Duration, st.Error)
		for _, l := range st.Logs {
			fmt.Fprintf(&b, "    log %s: %s\n", l.Level, l.Message)
		}
	}
	return b.String()
}
