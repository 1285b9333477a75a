// Package convertcmd is rulecheck's jsonlogic and derive commands, wired by cmd/rulecheck: kept
// apart from impl/rules/rulecheck so that the rules command, which shares check and compile, does not
// carry the converters (nor kin-openapi).
package convertcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/sdods/sdods/impl/rules/rulecheck"
	"github.com/sdods/sdods/impl/rules/rulecheck/jsonlogic"
	"github.com/sdods/sdods/impl/rules/yamlrules"
)

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

const jsonlogicUsage = `usage: rulecheck jsonlogic import|export [flags] [FILE]

  import   JSON Logic (as json-logic-js evaluates it) to an sdods expression
  export   an sdods expression to JSON Logic
  FILE is JSON or YAML (by extension; standard input is JSON); the result goes to standard output
  or -o FILE. Exit status 1 when the conversion is refused, with every diagnostic.
`

// Main runs the commands; Stdin nil is os.Stdin.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Run executes jsonlogic or derive with its arguments and returns the exit status: 0 success,
// 1 refusal or failure, 2 usage.
func (m *Main) Run(_ context.Context, cmd string, args []string) int {
	switch cmd {
	case "jsonlogic":
		return m.jsonlogic(args)
	case "derive":
		return m.derive(args)
	}
	fmt.Fprintf(m.Stderr, "rulecheck: unknown command %q\n", cmd)
	return 2
}

// jsonlogic runs rulecheck jsonlogic import|export.
func (m *Main) jsonlogic(args []string) int {
	if len(args) == 0 || (args[0] != "import" && args[0] != "export") {
		fmt.Fprint(m.Stderr, jsonlogicUsage)
		return 2
	}
	dir := args[0]
	fs := flag.NewFlagSet("jsonlogic "+dir, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	var types multiFlag
	fs.Var(&types, "type", "PATH=TYPE: the type of a data path (repeatable; TYPE is null|boolean|number|string|array|object|any joined by |)")
	jsCompat := fs.Bool("js-compat", false, "import: reproduce JavaScript semantics with functions and accept the documented costs")
	root := fs.String("root", "data", "the sdods environment root that holds the JSON Logic data")
	fnFile := fs.String("functions", "", "export: a JSON file of function definitions {name: {params, body}} to inline")
	asJSON := fs.Bool("json", false, "write {expression, functions, diagnostics} as JSON, for tools")
	out := fs.String("o", "", "write the result to this file instead of standard output")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprint(m.Stderr, jsonlogicUsage)
		return 2
	}
	ts, err := jsonlogic.ParseTypes(types)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck jsonlogic: %v\n", err)
		return 2
	}
	if *jsCompat && dir == "export" {
		fmt.Fprintln(m.Stderr, "rulecheck jsonlogic: --js-compat applies to import only")
		return 2
	}
	name, src, err := readInput(fs.Arg(0), m.Stdin)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck jsonlogic: %v\n", err)
		return 2
	}
	if offs := jsonlogic.LoneSurrogates(src); len(offs) > 0 {
		for _, off := range offs {
			line, col := lineCol(src, off)
			fmt.Fprintf(m.Stderr, "%s:%d:%d: %s: a lone surrogate escape is not Unicode text: JavaScript keeps it, sdods reads U+FFFD, so nothing containing it converts faithfully\n", name, line, col, jsonlogic.CodeInvalid)
		}
		return 1
	}
	doc, problems := readDoc(name, src)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(m.Stderr, rulecheck.Format(name, p))
		}
		return 1
	}
	input, err := decodeNumbers(doc.JSON)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck jsonlogic: %s: %v\n", name, err)
		return 1
	}
	opt := jsonlogic.Options{JSCompat: *jsCompat, Root: *root, Types: ts}
	var conv *jsonlogic.Converted
	if dir == "import" {
		conv = jsonlogic.Import(input, opt)
	} else {
		var fns map[string]any
		if *fnFile != "" {
			b, err := os.ReadFile(*fnFile)
			if err != nil {
				fmt.Fprintf(m.Stderr, "rulecheck jsonlogic: %v\n", err)
				return 2
			}
			v, err := decodeNumbers(b)
			fns, _ = v.(map[string]any)
			if err != nil || fns == nil {
				fmt.Fprintf(m.Stderr, "rulecheck jsonlogic: %s: not a JSON object of function definitions\n", *fnFile)
				return 2
			}
		}
		conv = jsonlogic.Export(input, fns, opt)
	}
	for i := range conv.Diagnostics {
		d := &conv.Diagnostics[i]
		if !strings.HasPrefix(d.Pointer, "/functions/") {
			pos := doc.Position(d.Pointer)
			d.Line, d.Column = pos.Line, pos.Column
		}
	}
	var result []byte
	switch {
	case *asJSON:
		result, err = marshalIndent(conv, "", "  ")
	case conv.Refused():
	case conv.Functions != nil:
		result, err = marshalIndent(map[string]any{"expression": conv.Expression, "functions": conv.Functions}, "", "")
	default:
		result, err = marshalIndent(conv.Expression, "", "")
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck jsonlogic: %v\n", err)
		return 1
	}
	if !*asJSON {
		for _, d := range conv.Diagnostics {
			fmt.Fprintf(m.Stderr, "%s:%d:%d: %s at %s: %s\n", name, max(d.Line, 1), max(d.Column, 1), d.Code, orRoot(d.Pointer), d.Message)
		}
	}
	if result != nil {
		result = append(result, '\n')
		if *out != "" {
			if err := rulecheck.WriteAtomic(*out, result); err != nil {
				fmt.Fprintf(m.Stderr, "rulecheck jsonlogic: %v\n", err)
				return 1
			}
		} else if _, err := m.Stdout.Write(result); err != nil {
			return 1
		}
	}
	if conv.Refused() {
		return 1
	}
	return 0
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// readInput reads FILE, or standard input when FILE is "" or "-".
func readInput(file string, stdin io.Reader) (string, []byte, error) {
	if file == "" || file == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		b, err := io.ReadAll(stdin)
		return "<stdin>", b, err
	}
	b, err := os.ReadFile(file)
	return file, b, err
}

// readDoc reads JSON or YAML (by the file's extension) keeping every node's position.
func readDoc(name string, src []byte) (*yamlrules.Document, []yamlrules.Problem) {
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		return yamlrules.ReadYAML(src)
	}
	return yamlrules.ReadJSON(src)
}

func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// marshalIndent writes JSON indented by two spaces, without escaping <, > and & (operators).
func marshalIndent(v any, prefix, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent(prefix, indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// lineCol is the 1-based line and column (in code points) of byte offset off.
func lineCol(src []byte, off int) (int, int) {
	line, start := 1, 0
	for i := 0; i < off && i < len(src); i++ {
		if src[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, utf8.RuneCount(src[start:off]) + 1
}
