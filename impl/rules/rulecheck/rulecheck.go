// Package rulecheck is the rulecheck tool: check lints source rulesets, compile writes their
// bundles, jsonlogic converts expressions from and to JSON Logic, derive writes baseline rulesets
// from OpenAPI schemas. cmd/rulecheck parses nothing but calls Main.Run.
package rulecheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/impl/rules/yamlrules"
)

// Main is one invocation of the tool.
type Main struct {
	Args   []string // arguments after the program name
	Stdout io.Writer
	Stderr io.Writer
	// Suite runs the conformance and sync commands (impl/rules/rulecheck/suitecmd, wired by
	// cmd/rulecheck); kept apart so that the rules command, which shares check and compile, does
	// not carry the suite.
	Suite func(ctx context.Context, cmd string, args []string) int
	// Convert runs the jsonlogic and derive commands (impl/rules/rulecheck/convertcmd), kept apart for
	// the same reason.
	Convert func(ctx context.Context, cmd string, args []string) int
}

const usage = `usage: rulecheck <command> [flags] FILE...

commands:
  check    lint source rulesets (YAML or JSON): schema and load problems with file:line:column,
           YAML_NOT_PORTABLE and NUMBER_NOT_PORTABLE; exit status 1 on any problem
  compile [-o DIR] [--strict] FILE...
           write NAME.bundle.json next to each source (or into -o DIR), atomically; YAML is read by
           the YAML 1.2 core schema and lint findings are warnings on standard error (--strict:
           problems that refuse the source)
  conformance --engine "COMMAND" [--level evaluator|compiler] [--filter RE] [--timeout D] [--json FILE]
           certify an engine over the engine protocol with the suite (the seed's 1899 cases and the
           additions); exit status 1 on any failure
  jsonlogic import|export [--js-compat] [--type PATH=TYPE]... [--root NAME] [--functions FILE] [--json] [-o FILE] [FILE]
           convert expressions from and to JSON Logic (json-logic-js semantics), faithfully or not at all:
           exit status 1 with every diagnostic (file:line:column, JSON pointer, reason) on refusal
  derive --openapi FILE --schema NAME [--direction request|response] [--format yaml|json] [--strict] [-o FILE]
           a baseline ruleset checking a body against a component schema's constraints, with stable
           finding codes and a lossiness report of what it cannot express (--strict: exit 1 on any)
  sync [--check] [--root DIR]
           regenerate the schema copies, the fixtures' bundles, the golden and compiler expectations, the
           evaluation corpus and the example client manifest; --check lists what drifted and exits 1
`

// Run executes the command and returns the exit status: 0 success, 1 problems found, 2 usage.
func (m *Main) Run(ctx context.Context) int {
	if len(m.Args) == 0 {
		fmt.Fprint(m.Stderr, usage)
		return 2
	}
	switch m.Args[0] {
	case "check":
		return m.check(ctx, m.Args[1:])
	case "compile":
		return m.compile(ctx, m.Args[1:])
	case "jsonlogic", "derive":
		if m.Convert == nil {
			fmt.Fprintf(m.Stderr, "rulecheck: %s is not available in this build\n", m.Args[0])
			return 2
		}
		return m.Convert(ctx, m.Args[0], m.Args[1:])
	case "conformance", "sync":
		if m.Suite == nil {
			fmt.Fprintf(m.Stderr, "rulecheck: %s is not available in this build\n", m.Args[0])
			return 2
		}
		return m.Suite(ctx, m.Args[0], m.Args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(m.Stdout, usage)
		return 0
	}
	fmt.Fprintf(m.Stderr, "rulecheck: unknown command %q\n%s", m.Args[0], usage)
	return 2
}

func (m *Main) check(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(m.Stderr, "rulecheck check: no files")
		return 2
	}
	status := 0
	for _, file := range fs.Args() {
		if ctx.Err() != nil {
			return 1
		}
		// check is the linter: the lint findings are what it reports, as problems
		_, problems, _, err := Load(file, true)
		if err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck: %v\n", err)
			status = 1
			continue
		}
		for _, p := range problems {
			fmt.Fprintln(m.Stdout, Format(file, p))
		}
		if len(problems) > 0 {
			status = 1
		}
	}
	return status
}

func (m *Main) compile(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("compile", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	out := fs.String("o", "", "directory for the bundles (default: next to each source)")
	strict := fs.Bool("strict", false, "refuse a source with lint findings (YAML_NOT_PORTABLE, NUMBER_NOT_PORTABLE) instead of warning")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(m.Stderr, "rulecheck compile: no files")
		return 2
	}
	status := 0
	for _, file := range fs.Args() {
		if ctx.Err() != nil {
			return 1
		}
		rs, problems, warnings, err := Load(file, *strict)
		if err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck: %v\n", err)
			status = 1
			continue
		}
		WriteWarnings(m.Stderr, file, warnings)
		if len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintln(m.Stdout, Format(file, p))
			}
			status = 1
			continue
		}
		b, err := rs.Bundle()
		if err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck: %s: %v\n", file, err)
			status = 1
			continue
		}
		dir := *out
		if dir == "" {
			dir = filepath.Dir(file)
		}
		dst := filepath.Join(dir, BundleName(file))
		if err := WriteAtomic(dst, b); err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck: %v\n", err)
			status = 1
			continue
		}
		fmt.Fprintf(m.Stdout, "%s: %s %s %s\n", dst, rs.ID(), rs.Version(), rs.Checksum())
	}
	return status
}

// BundleName returns NAME.bundle.json for a source file NAME.yaml, NAME.yml or NAME.json.
func BundleName(file string) string {
	base := filepath.Base(file)
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(base, ext) {
			base = strings.TrimSuffix(base, ext)
			break
		}
	}
	return base + ".bundle.json"
}

// Format writes a problem as FILE:LINE:COLUMN: CODE at POINTER: message.
func Format(file string, p yamlrules.Problem) string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "/"
	}
	return fmt.Sprintf("%s:%d:%d: %s at %s: %s", file, p.Line, p.Column, p.Code, ptr, p.Message)
}

// Load reads and compiles a source ruleset file (see Compile); err is an I/O error.
func Load(file string, strict bool) (rs *engine.RuleSet, problems, warnings []yamlrules.Problem, err error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, nil, err
	}
	rs, problems, warnings = Compile(src, strings.HasSuffix(file, ".json"), strict)
	return rs, problems, warnings, nil
}

// Compile reads a source (JSON when isJSON, YAML otherwise by the YAML 1.2 core schema), lints it
// and compiles it. The lint findings (YAML_NOT_PORTABLE, NUMBER_NOT_PORTABLE) are warnings: the
// source means what YAML 1.2 says it means, so it compiles all the same (spec/v1/ruleset.md
// §7). With strict they are problems instead, which refuse the source. problems holds
// every problem (reading, lint when strict, then load diagnostics with positions), in that
// order; the ruleset is returned only when there is none.
func Compile(src []byte, isJSON, strict bool) (rs *engine.RuleSet, problems, warnings []yamlrules.Problem) {
	var doc *yamlrules.Document
	if isJSON {
		doc, problems = yamlrules.ReadJSON(src)
	} else {
		doc, problems = yamlrules.ReadYAML(src)
	}
	if len(problems) > 0 {
		return nil, problems, nil
	}
	if strict {
		problems = doc.Lint()
	} else {
		warnings = doc.Lint()
	}
	rs, err := engine.Compile(doc.JSON)
	if err != nil {
		var ds engine.Diagnostics
		if !errors.As(err, &ds) {
			return nil, append(problems, yamlrules.Problem{Code: "INTERNAL", Line: 1, Column: 1, Message: err.Error()}), warnings
		}
		for _, d := range ds {
			pos := doc.Position(d.Pointer)
			problems = append(problems, yamlrules.Problem{Code: d.Code, Pointer: d.Pointer, Line: pos.Line, Column: pos.Column, Message: d.Message})
		}
	}
	if len(problems) > 0 {
		return nil, problems, warnings
	}
	return rs, nil, warnings
}

// WriteWarnings writes each warning to w as "warning: FILE:LINE:COLUMN: CODE at POINTER: message".
func WriteWarnings(w io.Writer, file string, warnings []yamlrules.Problem) {
	for _, p := range warnings {
		fmt.Fprintf(w, "warning: %s\n", Format(file, p))
	}
}

// WriteAtomic writes b to path through a temporary file in the same directory and a rename, so
// readers never see a partial bundle.
func WriteAtomic(path string, b []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err = tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
