package ruleserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/rulesapi"
	"github.com/sdods/sdods/impl/rules/ruleserver"
)

// signupVersion returns the signup fixture with its version set to v.
func signupVersion(t testing.TB, v string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, "signup", "signup.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`version: "1.0.0"`)) {
		t.Fatal("the signup fixture no longer has version 1.0.0")
	}
	return bytes.Replace(b, []byte(`version: "1.0.0"`), []byte(`version: "`+v+`"`), 1)
}

// brokenSignup is the signup fixture with a rule on a type that does not exist.
func brokenSignup(t testing.TB) []byte {
	b := signupVersion(t, "9.9.9")
	if !bytes.Contains(b, []byte("target: {type: Email}")) {
		t.Fatal("the signup fixture no longer targets the Email type")
	}
	return bytes.Replace(b, []byte("target: {type: Email}"), []byte("target: {type: Nope}"), 1)
}

func listedVersion(t testing.TB, url, id string) string {
	r := do(t, nil, "GET", url+"/rulesets", nil, auth()...)
	var l rulesapi.RulesetList
	readJSON(t, r.Body, &l)
	for _, it := range l.Items {
		if it.Id == id {
			return it.Version
		}
	}
	return ""
}

func readiness(t testing.TB, url string) (int, rulesapi.Readiness) {
	r := do(t, nil, "GET", url+"/readyz", nil)
	var out rulesapi.Readiness
	readJSON(t, r.Body, &out)
	return r.Status, out
}

// load runs workers that evaluate and fetch bundles until stop is closed; every answer must be
// 200 or 304, whatever the rules being published at that moment.
type load struct {
	ok, failed atomic.Int64
	versions   sync.Map
	firstErr   atomic.Value
	wg         sync.WaitGroup
}

func startLoad(t testing.TB, url string, workers int, stop <-chan struct{}) *load {
	l := &load{}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	body := []byte(`{"ruleset":"signup","data":{"account":{"email":"x"}},"ctx":{"today":"2025-06-15"}}`)
	for i := 0; i < workers; i++ {
		l.wg.Add(1)
		go func(i int) {
			defer l.wg.Done()
			etag := ""
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var req *http.Request
				if n%3 == 2 {
					req, _ = http.NewRequest("GET", url+"/rulesets/signup/bundle", nil)
					if etag != "" {
						req.Header.Set("If-None-Match", etag)
					}
				} else {
					req, _ = http.NewRequest("POST", url+"/evaluations", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
				}
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					l.fail(err)
					continue
				}
				var out struct {
					Ruleset rulesapi.RulesetRef `json:"ruleset"`
				}
				derr := json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 304:
					l.ok.Add(1)
				case resp.StatusCode == 200 && derr == nil && out.Ruleset.Id == "signup":
					l.ok.Add(1)
					l.versions.Store(out.Ruleset.Version, true)
					if n%3 == 2 {
						etag = resp.Header.Get("ETag")
					}
				default:
					l.fail(fmt.Errorf("%s %s: status %d", req.Method, req.URL.Path, resp.StatusCode))
				}
			}
		}(i)
	}
	return l
}

func (l *load) fail(err error) {
	l.failed.Add(1)
	l.firstErr.CompareAndSwap(nil, err)
}

func TestReloadUnderLoad(t *testing.T) {
	dir := rulesDir(t, "loan/loan.bundle.json")
	file := filepath.Join(dir, "signup.yaml")
	writeAtomic(t, file, signupVersion(t, "1.0.0"))
	s := startServer(t, ruleserver.Config{RulesDir: dir, Token: token, PollInterval: 10 * time.Millisecond})
	stop := make(chan struct{})
	l := startLoad(t, s.URL, 8, stop)

	published := []string{"1.0.0"}
	for i := 1; i <= 6; i++ {
		switch i {
		case 3: // a broken source: refused, the previous rules keep serving
			prev := published[len(published)-1]
			writeAtomic(t, file, brokenSignup(t))
			waitFor(t, "the broken ruleset to be refused", func() bool {
				_, r := readiness(t, s.URL)
				return r.LastReload != nil && !r.LastReload.Ok
			})
			status, r := readiness(t, s.URL)
			if status != 200 || r.Status != "ready" || len(r.LastReload.Problems) == 0 {
				t.Fatalf("readiness after a refused reload: %d %+v", status, r)
			}
			p := r.LastReload.Problems[0]
			if p.File != "signup.yaml" || p.Code != "TYPE_UNKNOWN" || p.Pointer == nil || p.Line == nil || *p.Line < 1 {
				t.Fatalf("problem %+v", p)
			}
			if v := listedVersion(t, s.URL, "signup"); v != prev {
				t.Fatalf("after a refused reload version %q is served, want %q", v, prev)
			}
		case 5: // a broken bundle next to a good source refuses the whole set
			bad := filepath.Join(dir, "bad.bundle.json")
			writeAtomic(t, bad, []byte(`{"formatVersion":1}`))
			waitFor(t, "the broken bundle to be refused", func() bool {
				_, r := readiness(t, s.URL)
				return r.LastReload != nil && !r.LastReload.Ok && len(r.LastReload.Problems) > 0 && r.LastReload.Problems[0].File == "bad.bundle.json"
			})
			_, r := readiness(t, s.URL)
			if r.LastReload.Problems[0].Code != "BUNDLE_INVALID" {
				t.Fatalf("problem %+v", r.LastReload.Problems[0])
			}
			if err := os.Remove(bad); err != nil {
				t.Fatal(err)
			}
		}
		v := fmt.Sprintf("1.0.%d", i)
		writeAtomic(t, file, signupVersion(t, v))
		waitFor(t, "version "+v, func() bool { return listedVersion(t, s.URL, "signup") == v })
		_, r := readiness(t, s.URL)
		if !r.LastReload.Ok || len(r.LastReload.Problems) != 0 {
			t.Fatalf("readiness after a good reload: %+v", r)
		}
		published = append(published, v)
		time.Sleep(30 * time.Millisecond) // let the load see this version
	}
	close(stop)
	l.wg.Wait()
	if n := l.failed.Load(); n != 0 {
		t.Fatalf("%d of %d requests failed during reloads; first: %v", n, n+l.ok.Load(), l.firstErr.Load())
	}
	var seen []string
	l.versions.Range(func(k, _ any) bool { seen = append(seen, k.(string)); return true })
	for _, v := range seen {
		if v == "9.9.9" {
			t.Fatal("the broken ruleset was served")
		}
	}
	if l.ok.Load() == 0 || len(seen) < 2 {
		t.Fatalf("the load saw %d answers and versions %v", l.ok.Load(), seen)
	}
	t.Logf("%d requests, no failure, versions seen %v", l.ok.Load(), seen)
}
