package ruleserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/gen/rulesapi"
	"github.com/sdods/sdods/impl/rules/yamlrules"
)

// Kinds of files in the rules directory. Everything else (and every name starting with '.',
// such as the ..data links of a Kubernetes ConfigMap volume) is ignored.
const (
	bundleSuffix = ".bundle.json"
)

// ruleFile reports whether name is a file the rules directory loads.
func ruleFile(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// entry is one loaded ruleset with its answers encoded once, at load time.
type entry struct {
	rs        *engine.RuleSet
	file      string
	fromFile  rulesapi.RulesetInfoSource
	etag      string            // the checksum, quoted: a strong entity tag
	bundle    []byte            // nil when the ruleset has no bundle
	manifests map[string][]byte // by channel
	info      rulesapi.RulesetInfo
}

// ruleSet is one generation of loaded rules; it is never modified once published.
type ruleSet struct {
	byID    map[string]*entry
	infos   []rulesapi.RulesetInfo // sorted by id
	missing []string               // union of the missing operators, sorted
}

// loadDir reads every ruleset of dir. It returns the rules only when there is no problem at all:
// a reload is all or nothing. warnings are portability lint findings that do not refuse a file.
func loadDir(dir string, opts []engine.Option) (*ruleSet, []rulesapi.LoadProblem, []string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, []rulesapi.LoadProblem{{File: dir, Code: "RULES_DIR_UNREADABLE", Message: err.Error()}}, nil
	}
	var problems []rulesapi.LoadProblem
	var warnings []string
	var loaded []*entry
	for _, de := range ents {
		name := de.Name()
		if !ruleFile(name) {
			continue
		}
		path := filepath.Join(dir, name)
		st, err := os.Stat(path) // follows the symbolic links of ConfigMap volumes
		if err != nil || st.IsDir() {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			problems = append(problems, rulesapi.LoadProblem{File: name, Code: "FILE_UNREADABLE", Message: err.Error()})
			continue
		}
		e, ps, ws := loadFile(name, src, opts)
		problems = append(problems, ps...)
		warnings = append(warnings, ws...)
		if e != nil {
			loaded = append(loaded, e)
		}
	}
	rs, dups := assemble(loaded)
	problems = append(problems, dups...)
	if len(problems) > 0 {
		return nil, problems, warnings
	}
	return rs, nil, warnings
}

// loadFile compiles a source ruleset or reads a bundle.
func loadFile(name string, src []byte, opts []engine.Option) (*entry, []rulesapi.LoadProblem, []string) {
	if strings.HasSuffix(strings.ToLower(name), bundleSuffix) {
		rs, err := engine.FromBundle(src, opts...)
		if err != nil {
			return nil, diagProblems(name, err, nil), nil
		}
		return newEntry(name, rs, rulesapi.RulesetInfoSourceBundle)
	}
	var doc *yamlrules.Document
	var ps []yamlrules.Problem
	if strings.EqualFold(filepath.Ext(name), ".json") {
		doc, ps = yamlrules.ReadJSON(src)
	} else {
		doc, ps = yamlrules.ReadYAML(src)
	}
	if len(ps) > 0 {
		out := make([]rulesapi.LoadProblem, len(ps))
		for i, p := range ps {
			out[i] = problem(name, p.Code, p.Pointer, p.Line, p.Column, p.Message)
		}
		return nil, out, nil
	}
	var warnings []string
	for _, p := range doc.Lint() {
		warnings = append(warnings, fmt.Sprintf("%s:%d:%d: %s at %s: %s", name, p.Line, p.Column, p.Code, p.Pointer, p.Message))
	}
	rs, err := engine.Compile(doc.JSON, opts...)
	if err != nil {
		return nil, diagProblems(name, err, doc), warnings
	}
	e, lps, _ := newEntry(name, rs, rulesapi.RulesetInfoSourceSource)
	return e, lps, warnings
}

func newEntry(name string, rs *engine.RuleSet, from rulesapi.RulesetInfoSource) (*entry, []rulesapi.LoadProblem, []string) {
	e := &entry{rs: rs, file: name, fromFile: from, etag: `"` + rs.Checksum() + `"`, manifests: map[string][]byte{}}
	var err error
	if e.bundle, err = rs.Bundle(); err != nil {
		return nil, diagProblems(name, err, nil), nil
	}
	for _, ch := range rs.Channels() {
		if e.manifests[ch], err = rs.Manifest(ch); err != nil {
			return nil, diagProblems(name, err, nil), nil
		}
	}
	e.info = rulesapi.RulesetInfo{Id: rs.ID(), Version: rs.Version(), Checksum: rs.Checksum(), Source: from}
	if from == rulesapi.RulesetInfoSourceSource {
		chs := make([]rulesapi.Channel, 0, 2)
		for _, ch := range rs.Channels() {
			chs = append(chs, rulesapi.Channel(ch))
		}
		missing := rs.MissingOperators()
		if missing == nil {
			missing = []string{}
		}
		e.info.Channels, e.info.MissingOperators = &chs, &missing
	}
	return e, nil, nil
}

// assemble indexes the loaded rulesets by id. A source and a bundle of the same ruleset with the
// same checksum are one ruleset (the source is kept); any other repeated id is a problem, since
// the server cannot know which one the operator meant.
func assemble(loaded []*entry) (*ruleSet, []rulesapi.LoadProblem) {
	sort.Slice(loaded, func(i, j int) bool { return loaded[i].file < loaded[j].file })
	out := &ruleSet{byID: map[string]*entry{}}
	var problems []rulesapi.LoadProblem
	for _, e := range loaded {
		prev, ok := out.byID[e.rs.ID()]
		if !ok {
			out.byID[e.rs.ID()] = e
			continue
		}
		if prev.rs.Checksum() == e.rs.Checksum() && prev.fromFile != e.fromFile {
			if e.fromFile == rulesapi.RulesetInfoSourceSource {
				out.byID[e.rs.ID()] = e
			}
			continue
		}
		problems = append(problems, rulesapi.LoadProblem{File: e.file, Code: "RULESET_DUPLICATE",
			Message: fmt.Sprintf("ruleset %q is also defined by %s (checksum %s, here %s); remove one of them or recompile the bundle",
				e.rs.ID(), prev.file, prev.rs.Checksum(), e.rs.Checksum())})
	}
	seen := map[string]bool{}
	for _, e := range out.byID {
		out.infos = append(out.infos, e.info)
		for _, op := range e.rs.MissingOperators() {
			if !seen[op] {
				seen[op] = true
				out.missing = append(out.missing, op)
			}
		}
	}
	sort.Slice(out.infos, func(i, j int) bool { return out.infos[i].Id < out.infos[j].Id })
	sort.Strings(out.missing)
	if out.infos == nil {
		out.infos = []rulesapi.RulesetInfo{}
	}
	if out.missing == nil {
		out.missing = []string{}
	}
	return out, problems
}

func problem(file, code, pointer string, line, col int, msg string) rulesapi.LoadProblem {
	p := rulesapi.LoadProblem{File: file, Code: code, Message: msg}
	if line > 0 {
		p.Line, p.Column = &line, &col
	}
	if pointer != "" {
		p.Pointer = &pointer
	}
	return p
}

// diagProblems turns engine diagnostics into load problems, with the source position when doc
// is the YAML or JSON source.
func diagProblems(file string, err error, doc *yamlrules.Document) []rulesapi.LoadProblem {
	var ds engine.Diagnostics
	if !errors.As(err, &ds) {
		var d *engine.Diagnostic
		if errors.As(err, &d) {
			ds = engine.Diagnostics{d}
		} else {
			return []rulesapi.LoadProblem{{File: file, Code: string(rulesapi.ErrorCodeINTERNAL), Message: err.Error()}}
		}
	}
	out := make([]rulesapi.LoadProblem, 0, len(ds))
	for _, d := range ds {
		line, col := 0, 0
		if doc != nil {
			pos := doc.Position(d.Pointer)
			line, col = pos.Line, pos.Column
		}
		out = append(out, problem(file, d.Code, d.Pointer, line, col, d.Message))
	}
	return out
}

// dirSignature describes the loadable files of dir (name, size, modification time), so a poll
// can tell whether anything changed without reading them.
func dirSignature(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, de := range ents {
		if !ruleFile(de.Name()) {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, de.Name()))
		if err != nil {
			fmt.Fprintf(&b, "%s:?\n", de.Name())
			continue
		}
		fmt.Fprintf(&b, "%s:%d:%d:%v\n", de.Name(), st.Size(), st.ModTime().UnixNano(), st.IsDir())
	}
	return b.String()
}
