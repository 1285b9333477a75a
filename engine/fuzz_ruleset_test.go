package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
)

// FuzzRulesetLoad feeds bundles, manifests and source documents to the loaders: they must return
// a ruleset or Diagnostics, never panic or report INTERNAL; a loaded ruleset's bundle reloads to
// the same bytes.
func FuzzRulesetLoad(f *testing.F) {
	// Seeds: the smallest fixture bundle, a manifest and source documents. (The fuzzer slows
	// to a crawl on many 25 KB seeds, so the large bundles are left to the golden tests.)
	b, err := os.ReadFile(filepath.Join(fixturesDir, "signup", "signup.bundle.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	small, err := engine.Compile(doc(`"rules":[` + okRule + `]`))
	if err != nil {
		f.Fatal(err)
	}
	sb, _ := small.Bundle()
	sm, _ := small.Manifest(engine.ChannelClient)
	f.Add(sb)
	f.Add(sm)
	f.Add(doc(`"rules":[` + okRule + `]`))
	f.Add([]byte(signupRuleset))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, load := range []func([]byte, ...engine.Option) (*engine.RuleSet, error){engine.Compile, engine.FromBundle, engine.FromManifest} {
			rs, err := load(b, engine.WithOperators(testops.Operators()))
			if err != nil {
				var ds engine.Diagnostics
				if !errors.As(err, &ds) || len(ds) == 0 {
					t.Fatalf("not Diagnostics: %v", err)
				}
				for _, d := range ds {
					if d.Code == "INTERNAL" {
						t.Fatalf("INTERNAL: %v", d)
					}
				}
				continue
			}
			if len(rs.Channels()) == 2 {
				out, err := rs.Bundle()
				if err != nil {
					t.Fatal(err)
				}
				again, err := engine.FromBundle(out)
				if err != nil {
					t.Fatalf("a written bundle does not load: %v", err)
				}
				out2, _ := again.Bundle()
				if string(out) != string(out2) {
					t.Fatal("bundle not stable across a reload")
				}
			}
		}
	})
}

// FuzzRulesetEvaluate feeds request bodies to every fixture: each is refused with BAD_REQUEST or
// evaluated without error; INTERNAL never appears.
func FuzzRulesetEvaluate(f *testing.F) {
	fixtures := loadFixtures(f)
	for _, fx := range fixtures {
		for _, tc := range fx.golden.Tests {
			f.Add(uint8(0), []byte(tc.Request))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		fx := fixtures[int(which)%len(fixtures)]
		res, err := fx.rs.EvaluateJSON(body)
		if err != nil {
			var d *engine.Diagnostic
			if !errors.As(err, &d) || d.Code != "BAD_REQUEST" {
				t.Fatalf("want BAD_REQUEST, got %v", err)
			}
			return
		}
		for _, fd := range res.Findings {
			if fd.Code == engine.RuleFailed && len(fd.Message) > 0 && fd.Message[len(fd.Message)-8:] == "INTERNAL" {
				t.Fatalf("INTERNAL: %+v", fd)
			}
		}
		if _, err := res.MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	})
}
