// Package tracing reads the traces the runner keeps of scenarios (steplib.TraceManifest, stored as
// run files) and compares a failed scenario's trace with its last passing run's, step by step
// (docs/reports.md, "Trace diff"). Diff is pure; Service finds and loads the two traces.
package tracing

import (
	"net/url"
	"sort"
	"strings"

	"github.com/sdods/sdods/impl/server/steplib"
)

// StepDiff is how one step of a trace differs from the same step of the baseline.
type StepDiff struct {
	Index                          int
	Text, BaselineText             string // BaselineText only when it differs
	Status, BaselineStatus         string
	DurationMs, BaselineDurationMs *int64
	// TimingChanged: both ran and their durations differ by more than 50% and more than 250 ms.
	TimingChanged bool
	Network       []NetworkDiff
	// ConsoleAdded and ConsoleRemoved are console errors and uncaught exceptions of one side only.
	ConsoleAdded, ConsoleRemoved []string
	// DOM is set when the HTML of the element the step acted on differs (or exists on one side only).
	DOM     *DOMDiff
	Differs bool
}

// The changes of a network call.
const (
	NetworkAdded   = "added"
	NetworkRemoved = "removed"
	NetworkStatus  = "status"
)

// NetworkDiff is a request made on one side only, or answered with another status (0: no
// answer, a network error).
type NetworkDiff struct {
	Change         string
	Method, URL    string
	Status         int
	BaselineStatus int
}

// DOMDiff is the acted-on element's HTML on both sides ("" where the page had no such element).
type DOMDiff struct {
	Selector           string
	HTML, BaselineHTML string
}

// Timing thresholds of TimingChanged.
const (
	timingRatio   = 0.5
	timingFloorMs = 250
)

// Diff compares trace cur with baseline step by step (aligned by index) and returns the steps
// with the index of the first that differs, -1 when none does.
func Diff(cur, baseline steplib.TraceManifest) ([]StepDiff, int) {
	n := max(len(cur.Steps), len(baseline.Steps))
	out := make([]StepDiff, 0, n)
	first := -1
	for i := 0; i < n; i++ {
		var a, b *steplib.TraceStep
		if i < len(cur.Steps) {
			a = &cur.Steps[i]
		}
		if i < len(baseline.Steps) {
			b = &baseline.Steps[i]
		}
		d := diffStep(i, a, b)
		if d.Differs && first < 0 {
			first = i
		}
		out = append(out, d)
	}
	return out, first
}

func diffStep(i int, a, b *steplib.TraceStep) StepDiff {
	d := StepDiff{Index: i, Network: []NetworkDiff{}, ConsoleAdded: []string{}, ConsoleRemoved: []string{}}
	var empty steplib.TraceStep
	if a == nil {
		a = &empty
	}
	if b == nil {
		b = &empty
	}
	d.Text = stepText(a)
	if d.Text == "" {
		d.Text = stepText(b)
	} else if t := stepText(b); t != "" && t != d.Text {
		d.BaselineText = t
	}
	d.Status, d.BaselineStatus = a.Status, b.Status
	if a != &empty {
		d.DurationMs = &a.DurationMs
	}
	if b != &empty {
		d.BaselineDurationMs = &b.DurationMs
	}
	if d.DurationMs != nil && d.BaselineDurationMs != nil {
		delta := abs(a.DurationMs - b.DurationMs)
		d.TimingChanged = delta > timingFloorMs && float64(delta) > timingRatio*float64(b.DurationMs)
	}
	d.Network = diffNetwork(a.Network, b.Network)
	d.ConsoleAdded, d.ConsoleRemoved = diffConsole(errorsOf(a.Console), errorsOf(b.Console))
	d.DOM = diffDOM(a.Target, b.Target)
	d.Differs = d.Status != d.BaselineStatus || d.BaselineText != "" || d.TimingChanged || len(d.Network) > 0 ||
		len(d.ConsoleAdded) > 0 || len(d.ConsoleRemoved) > 0 || d.DOM != nil
	return d
}

func stepText(s *steplib.TraceStep) string {
	if s.Text == "" {
		return ""
	}
	return strings.TrimSpace(s.Keyword) + " " + s.Text
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// requestKey is what identifies a call across runs: its method and its URL without query or
// fragment (a query often carries a cache buster or a time).
func requestKey(q *steplib.TraceRequest) (key, shown string) {
	shown = q.URL
	if u, err := url.Parse(q.URL); err == nil {
		u.RawQuery, u.Fragment = "", ""
		shown = u.String()
	}
	return q.Method + " " + shown, shown
}

// diffNetwork pairs the calls of each key in order; unpaired ones are added or removed, pairs
// answered differently changed.
func diffNetwork(cur, base []*steplib.TraceRequest) []NetworkDiff {
	type side struct {
		method, url string
		statuses    []int
	}
	group := func(qs []*steplib.TraceRequest) (map[string]*side, []string) {
		m := map[string]*side{}
		var order []string
		for _, q := range qs {
			if q == nil {
				continue
			}
			k, shown := requestKey(q)
			g := m[k]
			if g == nil {
				g = &side{method: q.Method, url: shown}
				m[k] = g
				order = append(order, k)
			}
			st := q.Status
			if q.Failure != "" {
				st = 0
			}
			g.statuses = append(g.statuses, st)
		}
		return m, order
	}
	a, aOrder := group(cur)
	b, bOrder := group(base)
	out := []NetworkDiff{}
	for _, k := range aOrder {
		ga, gb := a[k], b[k]
		var bs []int
		if gb != nil {
			bs = gb.statuses
		}
		for j, st := range ga.statuses {
			switch {
			case j >= len(bs):
				out = append(out, NetworkDiff{Change: NetworkAdded, Method: ga.method, URL: ga.url, Status: st})
			case bs[j] != st:
				out = append(out, NetworkDiff{Change: NetworkStatus, Method: ga.method, URL: ga.url, Status: st, BaselineStatus: bs[j]})
			}
		}
	}
	for _, k := range bOrder {
		gb := b[k]
		na := 0
		if ga := a[k]; ga != nil {
			na = len(ga.statuses)
		}
		for j := na; j < len(gb.statuses); j++ {
			out = append(out, NetworkDiff{Change: NetworkRemoved, Method: gb.method, URL: gb.url, BaselineStatus: gb.statuses[j]})
		}
	}
	return out
}

func errorsOf(cs []steplib.TraceConsole) []string {
	var out []string
	for _, c := range cs {
		if c.Level == "error" || c.Level == "exception" || c.Level == "assert" {
			out = append(out, c.Text)
		}
	}
	return out
}

// diffConsole returns the messages of cur not in base and of base not in cur, counting repeats.
func diffConsole(cur, base []string) (added, removed []string) {
	count := map[string]int{}
	for _, m := range base {
		count[m]++
	}
	added, removed = []string{}, []string{}
	for _, m := range cur {
		if count[m] > 0 {
			count[m]--
			continue
		}
		added = append(added, m)
	}
	for m, n := range count {
		for ; n > 0; n-- {
			removed = append(removed, m)
		}
	}
	sort.Strings(removed)
	return added, removed
}

func diffDOM(a, b *steplib.TraceTarget) *DOMDiff {
	if a == nil && b == nil {
		return nil
	}
	var d DOMDiff
	if a != nil {
		d.Selector, d.HTML = a.Selector, a.HTML
	}
	if b != nil {
		if d.Selector == "" {
			d.Selector = b.Selector
		}
		d.BaselineHTML = b.HTML
	}
	if normHTML(d.HTML) == normHTML(d.BaselineHTML) {
		return nil
	}
	return &d
}

func normHTML(s string) string { return strings.Join(strings.Fields(s), " ") }
