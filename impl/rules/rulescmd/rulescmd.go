// Package rulescmd is the single-file command `rules`: version, check, compile, manifest,
// evaluate and engine (the engine protocol on standard input and output). cmd/rules only calls
// Main.Run; the same code is built for six platforms and for WebAssembly (wasip1).
package rulescmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/protocol"
	"github.com/sdods/sdods/engine/testops"
	"github.com/sdods/sdods/impl/rules/rulecheck"
)

// Main is one invocation of the command.
type Main struct {
	Args   []string // arguments after the program name
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

const usage = `usage: rules <command> [flags] [ARGS]

commands:
  version                       print the engine version (1.0.0-alpha.2), the spec and protocol versions
  check FILE...                 lint source rulesets (YAML or JSON); exit status 1 on any problem
  compile [-o DIR] [--strict] FILE...
                                write NAME.bundle.json for each source ruleset
  manifest [-channel C] [--strict] FILE
                                print the manifest of one channel (client by default) of a source or bundle
  evaluate [-channel C] [-locale L] [--strict] FILE REQUEST
                                evaluate a request (a JSON file, or - for standard input) with a source,
                                bundle or manifest; print the result

A YAML source is read by the YAML 1.2 core schema (unquoted no, on, dates are strings). What YAML
1.1 reads differently, and numbers that do not travel between runtimes, are lint findings:
check reports them (exit status 1); compile, manifest and evaluate write them as warnings on
standard error and go on, or refuse the source with --strict.
  engine                        speak the engine protocol (spec/v1/protocol.md) on standard input and output,
                                with the suite operators x-test-reverse, x-test-sum, x-luhn registered
`

const strictUsage = "refuse a source with lint findings (YAML_NOT_PORTABLE, NUMBER_NOT_PORTABLE) instead of warning"

// Run executes the command and returns the exit status: 0 success, 1 failure, 2 usage.
func (m *Main) Run(ctx context.Context) int {
	if len(m.Args) == 0 {
		fmt.Fprint(m.Stderr, usage)
		return 2
	}
	args := m.Args[1:]
	switch m.Args[0] {
	case "version", "--version", "-version":
		fmt.Fprintf(m.Stdout, "rules %s (spec %s, protocol %d)\n", engine.Version, engine.SpecVersion, protocol.Version)
		return 0
	case "check", "compile":
		rc := &rulecheck.Main{Args: m.Args, Stdout: m.Stdout, Stderr: m.Stderr}
		return rc.Run(ctx)
	case "manifest":
		return m.manifest(args)
	case "evaluate":
		return m.evaluate(args)
	case "engine":
		return m.engine(ctx, args)
	case "help", "-h", "--help":
		fmt.Fprint(m.Stdout, usage)
		return 0
	}
	fmt.Fprintf(m.Stderr, "rules: unknown command %q\n%s", m.Args[0], usage)
	return 2
}

// open loads FILE: a bundle (JSON with formatVersion and no channel), a manifest (JSON with
// formatVersion and channel) or a source ruleset (YAML or JSON), whose lint findings it writes to
// warn as warnings, or refuses when strict (rulecheck.Compile).
func open(file string, strict bool, warn io.Writer) (*engine.RuleSet, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(file, ".json") {
		var top map[string]json.RawMessage
		if json.Unmarshal(b, &top) == nil && top["formatVersion"] != nil {
			if top["channel"] != nil {
				return engine.FromManifest(b, engine.WithOperators(testops.Operators()))
			}
			return engine.FromBundle(b, engine.WithOperators(testops.Operators()))
		}
	}
	rs, problems, warnings := rulecheck.Compile(b, strings.HasSuffix(file, ".json"), strict)
	rulecheck.WriteWarnings(warn, file, warnings)
	if len(problems) > 0 {
		var lines []string
		for _, p := range problems {
			lines = append(lines, rulecheck.Format(file, p))
		}
		return nil, errors.New(strings.Join(lines, "\n"))
	}
	return rs, nil
}

func (m *Main) manifest(args []string) int {
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	channel := fs.String("channel", engine.ChannelClient, "channel: server or client")
	strict := fs.Bool("strict", false, strictUsage)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(m.Stderr, "rules manifest: one FILE expected")
		return 2
	}
	rs, err := open(fs.Arg(0), *strict, m.Stderr)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rules: %v\n", err)
		return 1
	}
	b, err := rs.Manifest(*channel)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rules: %v\n", err)
		return 1
	}
	_, _ = m.Stdout.Write(b)
	return 0
}

func (m *Main) evaluate(args []string) int {
	fs := flag.NewFlagSet("evaluate", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	channel := fs.String("channel", "", "channel: server (default) or client")
	locale := fs.String("locale", "", "locale of the messages (overrides the request's)")
	strict := fs.Bool("strict", false, strictUsage)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(m.Stderr, "rules evaluate: FILE and REQUEST expected")
		return 2
	}
	rs, err := open(fs.Arg(0), *strict, m.Stderr)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rules: %v\n", err)
		return 1
	}
	var raw []byte
	if fs.Arg(1) == "-" {
		raw, err = io.ReadAll(m.Stdin)
	} else {
		raw, err = os.ReadFile(fs.Arg(1))
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "rules: %v\n", err)
		return 1
	}
	req, err := engine.ParseRequest(raw)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rules: %v\n", err)
		return 1
	}
	if *locale != "" {
		req.Locale = *locale
	}
	var res *engine.Result
	if *channel != "" {
		res, err = rs.EvaluateChannel(*channel, req)
	} else {
		res, err = rs.Evaluate(req)
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "rules: %v\n", err)
		return 1
	}
	b, err := res.MarshalJSON()
	if err != nil {
		fmt.Fprintf(m.Stderr, "rules: %v\n", err)
		return 1
	}
	fmt.Fprintf(m.Stdout, "%s\n", b)
	return 0
}

func (m *Main) engine(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("engine", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	srv := protocol.New(protocol.WithName("sdods-go"), protocol.WithOperators(testops.Operators()))
	if err := srv.Serve(ctx, m.Stdin, m.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(m.Stderr, "rules engine: %v\n", err)
		return 1
	}
	return 0
}
