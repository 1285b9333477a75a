package steplib

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// A session keeps the cookies its responses set and sends them back; another session of the same
// client sees none of them; a session whose responses set none sends none.
func TestSessionCookiesStayInTheirSession(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: r.URL.Query().Get("as"), Path: "/"})
	})
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("sid")
		if err != nil {
			_, _ = w.Write([]byte("nobody"))
			return
		}
		_, _ = w.Write([]byte("user:" + c.Value))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()
	run := func(s *Session, text string) {
		t.Helper()
		if out := s.Execute(ctx, Step{Keyword: "When ", Text: text}, nil); out.Status != StatusPassed {
			t.Fatalf("%s: %+v", text, out)
		}
	}
	a := NewSession(Config{BaseURL: srv.URL, HTTPClient: client})
	b := NewSession(Config{BaseURL: srv.URL, HTTPClient: client})
	run(b, `I send a GET request to "/whoami"`)
	run(b, `the response body contains "nobody"`)
	run(a, `I send a GET request to "/login?as=ann"`)
	run(a, `I send a GET request to "/whoami"`)
	run(a, `the response body contains "user:ann"`)
	run(b, `I send a GET request to "/whoami"`)
	run(b, `the response body contains "nobody"`)
	if client.Jar != nil {
		t.Fatal("the sessions' jars are their own, not the client's")
	}
}

// CompileJSONPath gives the same path, or the same error, for a text however often it is asked.
func TestCompileJSONPathKept(t *testing.T) {
	for _, p := range []string{"$.status", "items[0]", "$.user-id", "$[?@.id==2]", "$.[", ""} {
		first, err1 := CompileJSONPath(p)
		second, err2 := CompileJSONPath(p)
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("%q: %v then %v", p, err1, err2)
		}
		fresh, err3 := compileJSONPath(p)
		if (err1 == nil) != (err3 == nil) || (err1 != nil && err1.Error() != err3.Error()) {
			t.Fatalf("%q: kept %v, fresh %v", p, err1, err3)
		}
		if err1 == nil && (first != second || first.String() != fresh.String()) {
			t.Fatalf("%q: %v, %v, fresh %v", p, first, second, fresh)
		}
	}
	doc := map[string]any{"status": "ok"}
	for range 3 {
		vals, singular, err := SelectJSONPath(doc, "$.status")
		if err != nil || !singular || len(vals) != 1 || vals[0] != "ok" {
			t.Fatalf("%v %v %v", vals, singular, err)
		}
	}
}

type logLines struct {
	nopReporter
	lines []string
}

func (l *logLines) Log(_, message string) { l.lines = append(l.lines, message) }

// A request's log line reads "METHOD URL → STATUS in N ms (N bytes)"; a base URL that is not an
// absolute http(s) URL fails every request that joins it, and one the scenario sets instead is used.
func TestRequestLogLineAndBaseURLCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"ok":true}`)) }))
	defer srv.Close()
	ctx := context.Background()
	rep := &logLines{}
	s := NewSession(Config{BaseURL: "ftp://example.com", HTTPClient: srv.Client()})
	for range 2 {
		out := s.Execute(ctx, Step{Keyword: "When ", Text: `I send a GET request to "/items/1"`}, rep)
		if out.Status != StatusFailed || !strings.HasPrefix(out.Error, "base URL: ") {
			t.Fatalf("%+v", out)
		}
	}
	if out := s.Execute(ctx, Step{Keyword: "Given ", Text: `the base URL is "` + srv.URL + `"`}, rep); out.Status != StatusPassed {
		t.Fatalf("%+v", out)
	}
	if out := s.Execute(ctx, Step{Keyword: "When ", Text: `I send a GET request to "/items/1"`}, rep); out.Status != StatusPassed {
		t.Fatalf("%+v", out)
	}
	re := regexp.MustCompile(`^GET ` + regexp.QuoteMeta(srv.URL) + `/items/1 → 200 OK in \d+ ms \(11 bytes\)$`)
	if len(rep.lines) != 1 || !re.MatchString(rep.lines[0]) {
		t.Fatalf("log lines %q", rep.lines)
	}
}
