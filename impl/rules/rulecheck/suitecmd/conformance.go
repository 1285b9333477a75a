// Package suitecmd holds the rulecheck commands about the conformance suite: conformance (certify
// an engine over the engine protocol) and sync [--check] (regenerate the suite's generated files,
// check the release line). It is apart from rulecheck so that the rules command, which shares
// rulecheck's check and compile, does not carry the suite.
package suitecmd

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/sdods/sdods/conformance"
	"github.com/sdods/sdods/impl/rules/harness"
	"github.com/sdods/sdods/impl/rules/rulecheck"
)

// Main runs one of the suite commands.
type Main struct {
	Stdout io.Writer
	Stderr io.Writer
}

// Run executes conformance or sync with its arguments and returns the exit status: 0 success, 1
// failure or drift, 2 usage.
func (m *Main) Run(ctx context.Context, cmd string, args []string) int {
	switch cmd {
	case "conformance":
		return m.conformance(ctx, args)
	case "sync":
		return m.sync(ctx, args)
	}
	fmt.Fprintf(m.Stderr, "rulecheck: unknown command %q\n", cmd)
	return 2
}

// suiteFS returns the suite: a directory when given, else the copy built into the tool.
func suiteFS(dir string) (fs.FS, error) {
	if dir == "" {
		return conformance.Suite(), nil
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	return os.DirFS(dir), nil
}

func (m *Main) conformance(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	engineCmd := fs.String("engine", "", `the engine command, for example "rules engine" (required)`)
	level := fs.String("level", harness.LevelCompiler, "conformance level: evaluator or compiler (compiler runs every case)")
	filter := fs.String("filter", "", "run only the cases whose id matches this regular expression")
	timeout := fs.Duration("timeout", 10*time.Second, "time allowed for each case")
	jsonOut := fs.String("json", "", "write the report as JSON to this file (- for standard output)")
	suite := fs.String("suite", "", "suite directory (default: the suite built into rulecheck)")
	quiet := fs.Bool("q", false, "no progress on standard error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *engineCmd == "" || fs.NArg() > 0 {
		fmt.Fprintln(m.Stderr, `rulecheck conformance: usage: rulecheck conformance --engine "COMMAND" [--level L] [--filter RE] [--timeout D] [--json FILE]`)
		return 2
	}
	words, err := SplitCommand(*engineCmd)
	if err != nil || len(words) == 0 {
		fmt.Fprintf(m.Stderr, "rulecheck conformance: --engine: %v\n", err)
		return 2
	}
	o := harness.Options{Engine: words, Level: *level, Timeout: *timeout}
	if !*quiet {
		o.Progress = m.Stderr
	}
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck conformance: --filter: %v\n", err)
			return 2
		}
		o.Filter = re
	}
	sfs, err := suiteFS(*suite)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck conformance: %v\n", err)
		return 2
	}
	rep, err := harness.Run(ctx, sfs, o)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck conformance: %v\n", err)
		return 1
	}
	out := m.Stdout
	if *jsonOut == "-" {
		out = m.Stderr
	}
	WriteReport(out, rep)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		b = append(b, '\n')
		if *jsonOut == "-" {
			_, _ = m.Stdout.Write(b)
		} else if err := rulecheck.WriteAtomic(*jsonOut, b); err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck conformance: %v\n", err)
			return 1
		}
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// WriteReport writes the failures with their diffs, then the summary per category.
func WriteReport(w io.Writer, rep *harness.Report) {
	for _, f := range rep.Failures {
		fmt.Fprintf(w, "FAIL %s\n", f.ID)
		for _, line := range strings.Split(f.Diff, "\n") {
			fmt.Fprintf(w, "     %s\n", line)
		}
	}
	var eng struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	_ = json.Unmarshal(rep.Engine, &eng)
	fmt.Fprintf(w, "engine %s %s (%s), level %s\n", eng.Name, eng.Version, rep.Command, rep.Level)
	fmt.Fprintf(w, "%-12s %6s %6s %6s %6s\n", "category", "total", "passed", "failed", "skipped")
	cats := make([]string, 0, len(rep.Categories))
	for _, c := range harness.Categories {
		if _, ok := rep.Categories[c.Name]; ok {
			cats = append(cats, c.Name)
		}
	}
	var seed harness.Tally
	seedCats := 0
	for _, c := range harness.Categories {
		if t, ok := rep.Categories[c.Name]; ok && c.Seed {
			seed.Total, seed.Passed, seed.Failed, seed.Skipped = seed.Total+t.Total, seed.Passed+t.Passed, seed.Failed+t.Failed, seed.Skipped+t.Skipped
			seedCats++
		}
	}
	for i, c := range cats {
		t := rep.Categories[c]
		fmt.Fprintf(w, "%-12s %6d %6d %6d %6d\n", c, t.Total, t.Passed, t.Failed, t.Skipped)
		if i+1 == seedCats && seedCats < len(cats) {
			// the seed's 1899 on a line of their own, before the cases added since
			fmt.Fprintf(w, "%-12s %6d %6d %6d %6d\n", "seed", seed.Total, seed.Passed, seed.Failed, seed.Skipped)
		}
	}
	t := rep.Totals
	fmt.Fprintf(w, "%-12s %6d %6d %6d %6d\n", "all", t.Total, t.Passed, t.Failed, t.Skipped)
	reasons := map[string]int{}
	for _, s := range rep.Skips {
		reasons[s.Reason]++
	}
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "skipped %d: %s\n", reasons[k], k)
	}
	verdict := "PASS"
	if !rep.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s %d of %d passed in %.2f s\n", verdict, t.Passed, t.Total, float64(rep.DurationMS)/1000)
}

// SplitCommand splits a command line into words: white space separates, single and double quotes
// group, a backslash outside single quotes escapes the next character.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			esc, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || esc {
		return nil, fmt.Errorf("unterminated quote or escape in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
