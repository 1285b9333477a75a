package runner

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	gherkin "github.com/cucumber/gherkin/go/v42"
	messages "github.com/cucumber/messages/go/v34"

	"github.com/sdods/sdods/impl/server/steplib"
)

// datasetTag marks an Examples table fed from a dataset: @dataset:<name>.
const datasetTag = "@dataset:"

// userTag leases a users-pool account before a scenario's first step: @user or @user:<label>.
const userTag = "@user"

type plannedStep struct {
	steplib.Step
	Line int
}

type plannedScenario struct {
	ref    ScenarioRef
	steps  []plannedStep
	leases []string // labels of the accounts to lease up front ("" = any)
}

type exampleRow struct {
	values  map[string]string
	dataset string
	row     int
}

// QuarantinedTag is the tag the runner gives every scenario whose identity is quarantined, so that
// a run's tag expression can select or leave them out ("not @quarantined").
const QuarantinedTag = "@quarantined"

// Identity is a scenario's identity across runs (docs/stats.md): md5 of its feature path, name and
// dataset row (empty without one), separated by U+001F, in hex — the database's
// run_scenarios.identity.
func Identity(featurePath, name string, row int) string {
	r := ""
	if row > 0 {
		r = strconv.Itoa(row)
	}
	sum := md5.Sum([]byte(featurePath + "\x1f" + name + "\x1f" + r))
	return hex.EncodeToString(sum[:])
}

// plan parses the selected features and returns their scenarios in order (by path, then source
// order), with the problems that kept some from being planned. cache (nil: none) keeps what a
// feature's text gives from one run to the next.
func plan(run Run, filter *TagExpr, cache *planCache) ([]plannedScenario, []Problem) {
	paths := make([]string, 0, len(run.Features))
	for p := range run.Features {
		if selected(p, run.Paths) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var (
		out      []plannedScenario
		problems []Problem
	)
	for _, p := range paths {
		scs, probs := cache.feature(p, run.Features[p], run.Datasets, run.Quarantined, filter)
		out = append(out, scs...)
		problems = append(problems, probs...)
	}
	return out, problems
}

// planCacheMax bounds the features a planCache keeps; when it is full it starts afresh.
const planCacheMax = 512

// planCache keeps, for a feature's path and text, its scenarios as every run plans them before its
// quarantine list and tag expression apply: a project's runs plan the same features again and
// again, and parsing them (Gherkin, pickles) was a run's largest cost before its first step. A
// feature is kept only when nothing else of the run changes what it gives: one with a problem (a
// syntax error, an Examples table fed from a dataset) is planned afresh every run, as before.
type planCache struct {
	mu sync.Mutex
	m  map[planKey]*plannedFeature
}

type planKey struct {
	path string
	sum  [sha256.Size]byte
}

// plannedFeature is a feature's planned scenarios with every tag selected and none quarantined;
// fresh tells that the feature is planned afresh each run instead.
type plannedFeature struct {
	scenarios []plannedScenario
	fresh     bool
}

var selectAll = &TagExpr{eval: func(map[string]bool) bool { return true }}

// feature returns the feature's scenarios for the run: what planFeature returns.
func (c *planCache) feature(p, src string, datasets map[string]Dataset, quarantined map[string]bool, filter *TagExpr) ([]plannedScenario, []Problem) {
	if c == nil {
		return planFeature(p, src, datasets, quarantined, filter)
	}
	key := planKey{path: p, sum: sha256.Sum256([]byte(src))}
	c.mu.Lock()
	f := c.m[key]
	c.mu.Unlock()
	if f == nil {
		scs, problems := planFeature(p, src, nil, nil, selectAll)
		f = &plannedFeature{scenarios: scs, fresh: len(problems) > 0}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= planCacheMax {
			c.m = map[planKey]*plannedFeature{}
		}
		c.m[key] = f
		c.mu.Unlock()
	}
	if f.fresh {
		return planFeature(p, src, datasets, quarantined, filter)
	}
	return f.selectFor(quarantined, filter), nil
}

// selectFor applies a run's quarantine list and tag expression to a kept feature, as planFeature
// does: the scenarios share the kept steps (read only), and have their own tags and example values.
func (f *plannedFeature) selectFor(quarantined map[string]bool, filter *TagExpr) []plannedScenario {
	var out []plannedScenario
	for _, ps := range f.scenarios {
		tags := slices.Clone(ps.ref.Tags)
		if quarantined[Identity(ps.ref.FeaturePath, ps.ref.Name, ps.ref.Row)] {
			tags = append(tags, QuarantinedTag)
		}
		if !filter.Match(tags) {
			continue
		}
		ps.ref.Tags = tags
		if ps.ref.Example != nil {
			ps.ref.Example = maps.Clone(ps.ref.Example)
		}
		out = append(out, ps)
	}
	return out
}

func selected(p string, filters []string) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		f = strings.Trim(f, "/")
		if f == "" || f == "." || p == f || strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}

// moduleOf returns the feature's folder, "." at the root.
func moduleOf(p string) string { return path.Dir(strings.Trim(p, "/")) }

func parseDocument(p, src string) (doc *messages.GherkinDocument, newID func() string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the Gherkin parser failed: %v", r)
		}
	}()
	ids := &messages.Incrementing{}
	newID = ids.NewId
	doc, err = gherkin.ParseGherkinDocument(strings.NewReader(src), newID)
	return doc, newID, err
}

func compilePickles(doc *messages.GherkinDocument, uri string, newID func() string) (pickles []*messages.Pickle, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("compiling the scenarios failed: %v", r)
		}
	}()
	return gherkin.Pickles(*doc, uri, newID), nil
}

func planFeature(p, src string, datasets map[string]Dataset, quarantined map[string]bool, filter *TagExpr) ([]plannedScenario, []Problem) {
	doc, newID, err := parseDocument(p, src)
	if err != nil {
		return nil, parseProblems(p, err)
	}
	if doc == nil || doc.Feature == nil {
		return nil, nil
	}
	var problems []Problem
	rows := map[string]exampleRow{}
	steps := map[string]*messages.Step{}
	forEachScenario(doc.Feature, func(sc *messages.Scenario, inherited []*messages.Tag) {
		for _, st := range sc.Steps {
			steps[st.Id] = st
		}
		for _, ex := range sc.Examples {
			prob := feedExamples(p, ex, datasets, newID, rows)
			if prob == nil {
				continue
			}
			// An outline the filter leaves out is no problem of this run.
			var tags []string
			for _, t := range append(append(append([]*messages.Tag{}, inherited...), sc.Tags...), ex.Tags...) {
				tags = append(tags, t.Name)
			}
			if filter.Match(tags) {
				problems = append(problems, *prob)
			}
		}
	}, func(bg *messages.Background) {
		for _, st := range bg.Steps {
			steps[st.Id] = st
		}
	})
	pickles, err := compilePickles(doc, p, newID)
	if err != nil {
		return nil, append(problems, Problem{Path: p, Message: err.Error()})
	}
	seen := map[int]int{}
	var out []plannedScenario
	for _, pk := range pickles {
		line := 0
		if pk.Location != nil {
			line = int(pk.Location.Line)
		}
		occurrence := seen[line]
		seen[line]++
		var tags []string
		for _, t := range pk.Tags {
			tags = append(tags, t.Name)
		}
		var ex exampleRow
		if len(pk.AstNodeIds) > 1 {
			ex = rows[pk.AstNodeIds[1]]
		}
		if quarantined[Identity(p, pk.Name, ex.row)] {
			tags = append(tags, QuarantinedTag)
		}
		if !filter.Match(tags) {
			continue
		}
		ref := ScenarioRef{
			ID:          scenarioID(p, line, occurrence),
			Module:      moduleOf(p),
			FeaturePath: p,
			FeatureName: doc.Feature.Name,
			Name:        pk.Name,
			Line:        line,
			Tags:        tags,
		}
		if len(pk.AstNodeIds) > 1 {
			if r, ok := rows[pk.AstNodeIds[1]]; ok {
				ref.Example, ref.Dataset, ref.Row = r.values, r.dataset, r.row
			}
		}
		ps := plannedScenario{ref: ref}
		for _, t := range tags {
			if t == userTag {
				ps.leases = append(ps.leases, "")
			} else if label, ok := strings.CutPrefix(t, userTag+":"); ok {
				ps.leases = append(ps.leases, label)
			}
		}
		for _, st := range pk.Steps {
			ps.steps = append(ps.steps, pickleStep(st, steps))
		}
		out = append(out, ps)
	}
	return out, problems
}

func pickleStep(st *messages.PickleStep, steps map[string]*messages.Step) plannedStep {
	out := plannedStep{Step: steplib.Step{Text: st.Text}}
	if len(st.AstNodeIds) > 0 {
		if ast := steps[st.AstNodeIds[0]]; ast != nil {
			out.Keyword = ast.Keyword
			if ast.Location != nil {
				out.Line = int(ast.Location.Line)
			}
		}
	}
	if a := st.Argument; a != nil {
		if a.DocString != nil {
			out.DocString = &steplib.DocString{MediaType: a.DocString.MediaType, Content: a.DocString.Content}
		}
		if a.DataTable != nil {
			for _, r := range a.DataTable.Rows {
				row := make([]string, len(r.Cells))
				for i, c := range r.Cells {
					row[i] = c.Value
				}
				out.DataTable = append(out.DataTable, row)
			}
		}
	}
	return out
}

// forEachScenario visits the scenarios (with the tags they inherit from the feature and rule) and
// the backgrounds of a feature.
func forEachScenario(f *messages.Feature, sc func(*messages.Scenario, []*messages.Tag), bg func(*messages.Background)) {
	for _, child := range f.Children {
		if child.Background != nil {
			bg(child.Background)
		}
		if child.Scenario != nil {
			sc(child.Scenario, f.Tags)
		}
		if child.Rule != nil {
			inherited := append(append([]*messages.Tag{}, f.Tags...), child.Rule.Tags...)
			for _, rc := range child.Rule.Children {
				if rc.Background != nil {
					bg(rc.Background)
				}
				if rc.Scenario != nil {
					sc(rc.Scenario, inherited)
				}
			}
		}
	}
}

// feedExamples records the values of each example row and, for an Examples table tagged
// @dataset:<name>, appends the dataset's rows (after any rows written inline). The table's header,
// when present, picks and orders the dataset columns; without one, all columns are used.
func feedExamples(p string, ex *messages.Examples, datasets map[string]Dataset, newID func() string, rows map[string]exampleRow) *Problem {
	name := ""
	for _, t := range ex.Tags {
		if n, ok := strings.CutPrefix(t.Name, datasetTag); ok {
			name = n
		}
	}
	line := 0
	if ex.Location != nil {
		line = int(ex.Location.Line)
	}
	if name != "" {
		ds, ok := datasets[name]
		if !ok {
			ex.TableHeader, ex.TableBody = nil, nil
			return &Problem{Path: p, Line: line, Message: fmt.Sprintf("dataset %q is not provided to this run (provided: %s)", name, datasetNames(datasets))}
		}
		index := map[string]int{}
		for i, c := range ds.Columns {
			index[c] = i
		}
		if ex.TableHeader == nil {
			hdr := &messages.TableRow{Id: newID(), Location: ex.Location}
			for _, c := range ds.Columns {
				hdr.Cells = append(hdr.Cells, &messages.TableCell{Location: ex.Location, Value: c})
			}
			ex.TableHeader = hdr
		}
		var missing []string
		for _, c := range ex.TableHeader.Cells {
			if _, ok := index[c.Value]; !ok {
				missing = append(missing, c.Value)
			}
		}
		if len(missing) > 0 {
			ex.TableHeader, ex.TableBody = nil, nil
			return &Problem{Path: p, Line: line, Message: fmt.Sprintf("dataset %q has no column %s (columns: %s)", name, strings.Join(missing, ", "), strings.Join(ds.Columns, ", "))}
		}
		for ri, r := range ds.Rows {
			row := &messages.TableRow{Id: newID(), Location: ex.Location}
			vals := map[string]string{}
			for _, c := range ex.TableHeader.Cells {
				v := ""
				if i := index[c.Value]; i < len(r) {
					v = r[i]
				}
				row.Cells = append(row.Cells, &messages.TableCell{Location: ex.Location, Value: v})
				vals[c.Value] = v
			}
			ex.TableBody = append(ex.TableBody, row)
			rows[row.Id] = exampleRow{values: vals, dataset: name, row: ri + 1}
		}
	}
	if ex.TableHeader == nil {
		return nil
	}
	for _, r := range ex.TableBody {
		if _, done := rows[r.Id]; done {
			continue
		}
		vals := map[string]string{}
		for i, c := range ex.TableHeader.Cells {
			if i < len(r.Cells) {
				vals[c.Value] = r.Cells[i].Value
			}
		}
		rows[r.Id] = exampleRow{values: vals}
	}
	return nil
}

func datasetNames(ds map[string]Dataset) string {
	if len(ds) == 0 {
		return "none"
	}
	names := make([]string, 0, len(ds))
	for n := range ds {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func scenarioID(p string, line, occurrence int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", p, line, occurrence))
	return hex.EncodeToString(h[:6])
}

// parseProblems turns the parser's errors (one per line, "(line:column): message") into problems.
func parseProblems(p string, err error) []Problem {
	var out []Problem
	for _, e := range splitErrors(err) {
		msg := e.Error()
		line := 0
		if strings.HasPrefix(msg, "(") {
			if _, scanErr := fmt.Sscanf(msg, "(%d:", &line); scanErr != nil {
				line = 0
			}
		}
		out = append(out, Problem{Path: p, Line: line, Message: "syntax error: " + msg})
	}
	return out
}

func splitErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	var inner interface{ Unwrap() []error }
	if errors.As(err, &inner) {
		return inner.Unwrap()
	}
	lines := strings.Split(err.Error(), "\n")
	out := make([]error, 0, len(lines))
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && l != "Parser errors:" {
			out = append(out, errors.New(l))
		}
	}
	return out
}

// processSteps parses a process: a feature whose first scenario (with its background) holds the
// steps, or bare step lines.
func processSteps(name, src string) ([]steplib.Step, error) {
	doc, newID, err := parseDocument(name, src)
	if err != nil || doc == nil || doc.Feature == nil {
		doc, newID, err = parseDocument(name, "Feature: "+name+"\nScenario: "+name+"\n"+src)
		if err != nil {
			return nil, fmt.Errorf("process %q: %v", name, err)
		}
	}
	steps := map[string]*messages.Step{}
	forEachScenario(doc.Feature, func(sc *messages.Scenario, _ []*messages.Tag) {
		for _, st := range sc.Steps {
			steps[st.Id] = st
		}
	}, func(bg *messages.Background) {
		for _, st := range bg.Steps {
			steps[st.Id] = st
		}
	})
	pickles, err := compilePickles(doc, name, newID)
	if err != nil {
		return nil, fmt.Errorf("process %q: %v", name, err)
	}
	if len(pickles) == 0 {
		return nil, fmt.Errorf("process %q has no steps", name)
	}
	var out []steplib.Step
	for _, st := range pickles[0].Steps {
		out = append(out, pickleStep(st, steps).Step)
	}
	return out, nil
}
