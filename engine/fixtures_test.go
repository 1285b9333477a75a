package engine_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
)

var update = flag.Bool("update", false, "rewrite the expected results of the golden evaluations")

const fixturesDir = "../conformance/fixtures"

// goldenFile is conformance/fixtures/NAME/evaluations.json.
type goldenFile struct {
	Fixture   string       `json:"fixture"`
	Bundle    string       `json:"bundle"`
	Source    string       `json:"source"`
	Operators []string     `json:"operators"`
	Tests     []goldenTest `json:"tests"`
}

type goldenTest struct {
	ID          string          `json:"id"`
	Description string          `json:"description"`
	Channel     string          `json:"channel,omitempty"`
	Request     json.RawMessage `json:"request"`
	Expected    json.RawMessage `json:"expected,omitempty"`
}

type fixture struct {
	dir    string
	golden goldenFile
	bundle []byte
	rs     *engine.RuleSet
}

func loadFixtures(tb testing.TB) []*fixture {
	tb.Helper()
	dirs, err := filepath.Glob(filepath.Join(fixturesDir, "*", "evaluations.json"))
	if err != nil || len(dirs) == 0 {
		tb.Fatalf("no fixtures: %v", err)
	}
	var out []*fixture
	for _, path := range dirs {
		f := &fixture{dir: filepath.Dir(path)}
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(b, &f.golden); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		f.bundle, err = os.ReadFile(filepath.Join(f.dir, f.golden.Bundle))
		if err != nil {
			tb.Fatal(err)
		}
		ops := map[string]engine.Operator{}
		for _, name := range f.golden.Operators {
			ops[name] = testops.Operators()[name]
		}
		f.rs, err = engine.FromBundle(f.bundle, engine.WithOperators(ops))
		if err != nil {
			tb.Fatalf("%s: %v", f.golden.Bundle, err)
		}
		out = append(out, f)
	}
	return out
}

// expectedOf returns the part of a result the golden files hold: findings and states.
func expectedOf(tb testing.TB, res *engine.Result) json.RawMessage {
	b, err := json.Marshal(res)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	out, _ := json.Marshal(map[string]json.RawMessage{"findings": m["findings"], "states": m["states"]})
	return out
}

func TestGoldenEvaluations(t *testing.T) {
	total := 0
	for _, f := range loadFixtures(t) {
		changed := false
		for i := range f.golden.Tests {
			tc := &f.golden.Tests[i]
			total++
			t.Run(tc.ID, func(t *testing.T) {
				req, err := engine.ParseRequest(tc.Request)
				if err != nil {
					t.Fatalf("request: %v", err)
				}
				ch := tc.Channel
				if ch == "" {
					ch = engine.ChannelServer
				}
				res, err := f.rs.EvaluateChannel(ch, req)
				if err != nil {
					t.Fatal(err)
				}
				got := expectedOf(t, res)
				if *update {
					if !jsonEqual(got, tc.Expected) {
						tc.Expected = got
						changed = true
					}
					return
				}
				if !jsonEqual(got, tc.Expected) {
					t.Errorf("got  %s\nwant %s", got, tc.Expected)
				}
			})
		}
		if changed {
			b, err := json.MarshalIndent(f.golden, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
			if err := os.WriteFile(filepath.Join(f.dir, "evaluations.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if total != 66 {
		t.Errorf("%d golden tests, want 66", total)
	}
}

func jsonEqual(a, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestFixtureBundlesRoundTrip checks that a bundle read and written again is byte-identical, and
// that each manifest loads on its own and evaluates like the bundle's channel.
func TestFixtureBundlesRoundTrip(t *testing.T) {
	for _, f := range loadFixtures(t) {
		b, err := f.rs.Bundle()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, f.bundle) {
			t.Errorf("%s: bundle not byte-identical after a round trip", f.golden.Bundle)
		}
		for _, ch := range f.rs.Channels() {
			m, err := f.rs.Manifest(ch)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := engine.FromManifest(m, engine.WithOperators(testops.Operators()))
			if err != nil {
				t.Fatalf("%s %s manifest: %v", f.golden.Fixture, ch, err)
			}
			if got := ms.Channels(); len(got) != 1 || got[0] != ch {
				t.Errorf("manifest channels %v", got)
			}
			if ms.Checksum() != f.rs.Checksum() {
				t.Errorf("manifest checksum %s, bundle %s", ms.Checksum(), f.rs.Checksum())
			}
			for _, tc := range f.golden.Tests {
				want := tc.Channel
				if want == "" {
					want = engine.ChannelServer
				}
				if want != ch {
					continue
				}
				req, _ := engine.ParseRequest(tc.Request)
				a, _ := ms.Evaluate(req)
				bres, _ := f.rs.EvaluateChannel(ch, req)
				if !jsonEqual(expectedOf(t, a), expectedOf(t, bres)) {
					t.Errorf("%s: manifest and bundle disagree", tc.ID)
				}
			}
		}
	}
}

// EvaluateInto with one Result reused across every golden request of every fixture, in order
// and again in reverse (results growing and shrinking, with and without states), gives exactly
// what a fresh evaluation gives.
func TestEvaluateIntoReusesAResult(t *testing.T) {
	var res engine.Result
	for _, f := range loadFixtures(t) {
		tests := f.golden.Tests
		order := make([]int, 0, 2*len(tests))
		for i := range tests {
			order = append(order, i)
		}
		for i := len(tests) - 1; i >= 0; i-- {
			order = append(order, i)
		}
		for _, i := range order {
			tc := &tests[i]
			req, err := engine.ParseRequest(tc.Request)
			if err != nil {
				t.Fatalf("%s: %v", tc.ID, err)
			}
			ch := tc.Channel
			if ch == "" {
				ch = engine.ChannelServer
			}
			fresh, err := f.rs.EvaluateChannel(ch, req)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := fresh.JSON()
			if err := f.rs.EvaluateInto(&res, ch, req); err != nil {
				t.Fatal(err)
			}
			got, _ := res.JSON()
			if string(got) != string(want) {
				t.Fatalf("%s: reused result\n%s\nfresh\n%s", tc.ID, got, want)
			}
		}
	}
	if err := loadFixtures(t)[0].rs.EvaluateInto(&res, "nope", &engine.Request{}); err == nil {
		t.Fatal("an unknown channel is refused")
	}
}
