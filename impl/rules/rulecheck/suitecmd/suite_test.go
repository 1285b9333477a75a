package suitecmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/conformance"
	"github.com/sdods/sdods/engine/protocol"
	"github.com/sdods/sdods/engine/testops"
	"github.com/sdods/sdods/impl/rules/harness"
	"github.com/sdods/sdods/impl/rules/rulecheck/suitecmd"
)

const engineEnv = "RULECHECK_TEST_ENGINE"

// TestMain lets the test binary stand in for an engine: with RULECHECK_TEST_ENGINE=1 it speaks
// the engine protocol on standard input and output, as `rules engine` does.
func TestMain(m *testing.M) {
	if mode := os.Getenv(engineEnv); mode == "skip" || mode == "hang" {
		os.Exit(oddEngine(mode))
	}
	if os.Getenv(engineEnv) == "1" {
		srv := protocol.New(protocol.WithOperators(testops.Operators()))
		if err := srv.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// oddEngine is the Go engine except for compile: "skip" answers it skipped, "hang" never answers.
func oddEngine(mode string) int {
	srv := protocol.New(protocol.WithOperators(testops.Operators()))
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.Contains(line, []byte(`"cmd":"compile"`)) {
			if mode == "hang" {
				select {}
			}
			var req struct{ ID json.RawMessage }
			_ = json.Unmarshal(line, &req)
			fmt.Printf("{\"id\":%s,\"skipped\":{\"reason\":\"no compiler here\"}}\n", req.ID)
			continue
		}
		fmt.Printf("%s\n", srv.Handle(line))
	}
	return 0
}

func TestSkippedAndTimeout(t *testing.T) {
	t.Setenv(engineEnv, "skip")
	filter := regexp.MustCompile(`^(compiler/signup/|golden/signup-)`)
	rep, err := harness.Run(context.Background(), conformance.Suite(), harness.Options{Engine: []string{os.Args[0]}, Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Skipped != 11 || rep.Totals.Passed != 13 || !rep.OK() || rep.Skips[0].Reason != "no compiler here" {
		t.Fatalf("skip: %+v", rep.Totals)
	}
	t.Setenv(engineEnv, "hang")
	filter = regexp.MustCompile(`^(load-error/structure/001|golden/signup-0[1-3])$`)
	rep, err = harness.Run(context.Background(), conformance.Suite(), harness.Options{Engine: []string{os.Args[0]}, Filter: filter, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The hung engine is killed and restarted: the cases after it still pass.
	if rep.OK() || rep.Totals.Failed != 1 || rep.Totals.Passed != 3 || !strings.HasPrefix(rep.Failures[0].Diff, "timeout") {
		var b bytes.Buffer
		suitecmd.WriteReport(&b, rep)
		t.Fatalf("timeout:\n%s", b.String())
	}
}

func TestSuiteCounts(t *testing.T) {
	files, err := harness.Load(conformance.Suite())
	if err != nil {
		t.Fatal(err)
	}
	if err := harness.CheckCounts(files); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range harness.Counts(files) {
		total += n
	}
	if total != harness.Total {
		t.Fatalf("%d cases, want %d", total, harness.Total)
	}
}

// TestConformance certifies the Go engine over the protocol with the whole suite.
func TestConformance(t *testing.T) {
	t.Setenv(engineEnv, "1")
	rep, err := harness.Run(context.Background(), conformance.Suite(), harness.Options{Engine: []string{os.Args[0]}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Totals.Passed != harness.Total {
		var b bytes.Buffer
		suitecmd.WriteReport(&b, rep)
		t.Fatalf("conformance:\n%s", b.String())
	}
}

func TestConformanceLevelAndFilter(t *testing.T) {
	t.Setenv(engineEnv, "1")
	var stdout, stderr bytes.Buffer
	m := &suitecmd.Main{Stdout: &stdout, Stderr: &stderr}
	args := []string{"-q", "--engine", os.Args[0], "--level", "evaluator", "--filter", "^(compiler|protocol)/"}
	if code := m.Run(context.Background(), "conformance", args); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "skipped 61: compiler-level case; the run is at the evaluator level") {
		t.Errorf("compiler cases not skipped at the evaluator level:\n%s", out)
	}
	if !strings.Contains(out, "PASS 82 of 143 passed") {
		t.Errorf("unexpected summary:\n%s", out)
	}
}

func TestSyncCheck(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	want, err := suitecmd.Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	drift, err := suitecmd.Drift(root, want)
	if err != nil {
		t.Fatal(err)
	}
	if len(drift) > 0 {
		t.Fatalf("generated files drifted (run rulecheck sync): %v", drift)
	}
	v, err := suitecmd.CheckVersions(root)
	if err != nil || len(v) > 0 {
		t.Fatalf("versions: %v %v", v, err)
	}
	// An edited generated file is reported.
	for name := range want {
		if strings.HasPrefix(name, "conformance/corpus/") {
			want[name] = append(append([]byte{}, want[name]...), ' ')
			break
		}
	}
	drift, err = suitecmd.Drift(root, want)
	if err != nil || len(drift) != 1 || !strings.HasPrefix(drift[0], "changed conformance/corpus/") {
		t.Fatalf("drift after an edit: %v %v", drift, err)
	}
}

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string]string{
		`rules engine`:                  "rules|engine",
		`node "my dir/wasi.mjs" x.wasm`: "node|my dir/wasi.mjs|x.wasm",
		`a 'b c' d\ e`:                  "a|b c|d e",
		`  spaced   out  `:              "spaced|out",
	} {
		got, err := suitecmd.SplitCommand(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := suitecmd.SplitCommand(`a "b`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

// TestCheckVersionsJava: the Java runtime's pom.xml and its version constant are checked when
// present; a disagreeing declaration is reported, a <version> of a dependency is not read.
func TestCheckVersionsJava(t *testing.T) {
	src := filepath.Join("..", "..", "..", "..")
	for _, tc := range []struct {
		name, pom, constant string
		want                []string
	}{
		{"agree", "1.0.0-alpha.2", "1.0.0-alpha.2", nil},
		{"pom differs", "1.0.0-alpha.1", "1.0.0-alpha.2", []string{"runtimes/java/pom.xml declares 1.0.0-alpha.1"}},
		{"constant differs", "1.0.0-alpha.2", "0.9.0", []string{"RuleSet.java declares 0.9.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range []string{"engine/expression.go", "spec/v1/README.md", "conformance/protocol/protocol.json"} {
				b, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(root, f), string(b))
			}
			writeFile(t, filepath.Join(root, "runtimes/java/pom.xml"), "<project><modelVersion>4.0.0</modelVersion>\n"+
				"<groupId>g</groupId><artifactId>a</artifactId><version>"+tc.pom+"</version>\n"+
				"<dependencies><dependency><version>5.9.2</version></dependency></dependencies></project>\n")
			writeFile(t, filepath.Join(root, "runtimes/java/src/main/java/dev/sdods/rules/RuleSet.java"),
				"public static final String VERSION = \""+tc.constant+"\";\n")
			got, err := suitecmd.CheckVersions(root)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("CheckVersions = %q, want %d lines like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("line %d = %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
