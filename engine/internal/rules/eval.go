package rules

import (
	"bytes"
	mbits "math/bits"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jcs"
	"github.com/sdods/sdods/engine/internal/machine"
	"github.com/sdods/sdods/engine/internal/num"
	"github.com/sdods/sdods/engine/internal/ruleset"
	"github.com/sdods/sdods/engine/internal/value"
)

// Location names a place of the user interface; empty members name nothing and are left out of
// JSON.
type Location struct {
	Page      string `json:"page,omitempty"`
	Screen    string `json:"screen,omitempty"`
	Section   string `json:"section,omitempty"`
	Component string `json:"component,omitempty"`
}

func (l *Location) get(i int) string {
	switch i {
	case 2:
		return l.Page
	case 3:
		return l.Screen
	case 4:
		return l.Section
	case 5:
		return l.Component
	}
	return ""
}

// Finding is one problem a rule found.
type Finding struct {
	Code     string   `json:"code"`
	Severity string   `json:"severity"`
	Message  string   `json:"message"`
	Field    string   `json:"field,omitempty"`
	Rule     string   `json:"rule"`
	Location Location `json:"location"`
}

// Result is the outcome of one evaluation.
type Result struct {
	Ruleset  Ref       `json:"ruleset"`
	Findings []Finding `json:"findings"`
	States   States    `json:"states"` // nil when no state rule applied

	props []Property // backing of the States' properties, reused by EvaluateInto
	spare States     // States' storage while States is nil
}

// States are the states state rules set: one FieldState per field, in the RFC 8785 order of the
// field paths (the order of the JSON object), each with its properties in that order too. When
// two state rules set the same property of a field, the later one (in document order) wins.
type States []FieldState

// FieldState is the state of one field: properties such as hidden, required, readOnly, value.
type FieldState struct {
	Field string
	Props []Property
}

// Property is one state property of a field and its value (a boolean, or any JSON value for
// value).
type Property struct {
	Name  string
	Value any
}

// Get returns the value of property prop of field, and whether a state rule set it.
func (s States) Get(field, prop string) (any, bool) {
	if i, ok := s.find(field); ok {
		for _, p := range s[i].Props {
			if p.Name == prop {
				return p.Value, true
			}
		}
	}
	return nil, false
}

// find returns the index of field's state.
func (s States) find(field string) (int, bool) {
	for i := range s {
		if s[i].Field == field {
			return i, true
		}
	}
	return 0, false
}

// Map returns the states as a map of field paths to maps of properties.
func (s States) Map() map[string]map[string]any {
	out := make(map[string]map[string]any, len(s))
	for _, f := range s {
		m := make(map[string]any, len(f.Props))
		for _, p := range f.Props {
			m[p.Name] = p.Value
		}
		out[f.Field] = m
	}
	return out
}

// Request is a checked evaluation request: roots are nil or normalized JSON objects.
type Request struct {
	Data, Original, Actor, Ctx any
	View                       *Location
	Locale                     string
}

// inView reports whether a rule or state rule with the given scope (see scopeOf) is evaluated
// under a view whose location levels, page to component, are v.
func inView(v *[4]string, scope []scoped) bool {
	for _, sc := range scope {
		if a := v[sc.at]; a != "" && a != sc.name {
			return false
		}
	}
	return true
}

// scopeOf is what inView compares of a rule at level with location l: rules scoped project or
// module are evaluated under every view; otherwise every location level from page down to the
// rule's scope that both the view and the rule name must agree, so the levels the rule names are
// kept.
func scopeOf(level int, l *Location) []scoped {
	var out []scoped
	for i := 2; i <= level; i++ {
		if name := l.get(i); name != "" {
			out = append(out, scoped{at: i - 2, name: name})
		}
	}
	return out
}

// scoped is a location level a rule names: at indexes page, screen, section, component.
type scoped struct {
	at   int
	name string
}

type run struct {
	// p and chain are the program of the last evaluation and the catalogs of its locale, kept
	// when it ends: they hold nothing of the request, and a pointer not written (or cleared)
	// needs no write barrier while the collector runs
	p        *Program
	chain    *chain
	own      chain // the chain of a tag the program has none for
	m        machine.Machine
	globals  []any     // by global index (gData, ...)
	findings []Finding // scratch; copied into the result at the end
	pending  []any     // scratch: the values of a state rule's properties, when the stack has no room
	npending int       // how much of pending the evaluation has used, to be cleared at its end
	slotVals []any     // by state slot: the value set, while slotBits says so
	slotBits []uint64  // bit i%64 of word i/64: whether slot i was set
	nset     int       // slots set
	msgs     []byte    // the templated messages of this evaluation's findings, one after another
	msgAt    []msgSpan // which finding each is
	vals     []any     // scratch: the parameters of a finding's message
}

var runPool = sync.Pool{New: func() any { return new(run) }}

// Evaluate runs the program against a checked request. It never fails because of a rule: a rule
// that cannot be evaluated fails closed (a RULE_FAILED finding).
func (p *Program) Evaluate(req *Request) *Result {
	res := &Result{}
	p.EvaluateInto(req, res)
	return res
}

// EvaluateInto is Evaluate writing into res: its findings, states and their properties are
// overwritten, in the storage res already has when it is large enough, so that a host evaluating
// request after request with one Result allocates (almost) nothing. Nothing of the previous
// contents of res may be used afterwards.
func (p *Program) EvaluateInto(req *Request, res *Result) { p.evaluate(req, nil, p.ops, res) }

// evaluate is EvaluateInto with the custom operators ops; vals, when not nil, are the values of
// the paths of p.reads by slot, which the request's roots then need not hold (see decode).
func (p *Program) evaluate(req *Request, vals []any, ops map[string]machine.Operator, res *Result) {
	res.Ruleset = p.Ref
	r := p.idle.Swap(nil)
	if r == nil {
		r = runPool.Get().(*run)
	}
	if r.p != p {
		r.p = p
	}
	// findings go straight into a reused result's storage; a new result gets a copy of the
	// scratch at its exact size
	direct := cap(res.Findings) > 0
	var scratch []Finding
	if direct {
		scratch, r.findings = r.findings, res.Findings[:0]
	}
	if cap(r.globals) < p.nglobals {
		r.globals = make([]any, p.nglobals)
	}
	r.globals = r.globals[:p.nglobals]
	g := r.globals
	g[gData], g[gOriginal], g[gActor], g[gCtx] = req.Data, req.Original, req.Actor, req.Ctx
	r.m.Begin(g, ops, p.budget)
	if vals != nil {
		for i, path := range p.reads.paths {
			r.m.Preset(path, vals[i])
		}
	}
	r.m.CodesOnly(true) // a failing expression contributes only its code
	r.locales(req.Locale)
	if len(r.slotVals) < len(p.slots) {
		r.slotVals = make([]any, len(p.slots))
		r.slotBits = make([]uint64, (len(p.slots)+63)/64)
	}
	if v := req.View; v == nil {
		// every rule is in view; a rule on one static field is run here, without rule's call
		for _, ru := range p.rules {
			if !ru.oneField {
				if ru.noField {
					// rule's default case, without its call
					r.unbind(ru.reads)
					if holds, err := r.m.Test(ru.when); err != nil {
						r.failed(ru.id, &ru.loc, ru.fails, 0, "", code(err))
					} else if holds {
						r.found(ru, 0, "", nil)
					}
					continue
				}
				r.rule(ru)
				continue
			}
			if ru.byPath {
				// the condition reads the field by its path: the field's value is read and
				// bound only for a finding (holds without its call)
				if holds, err := r.m.Test(ru.when); err != nil || holds {
					r.byPath(ru, err)
				}
				continue
			}
			f := ru.single
			v := r.m.Value(f.memo)
			r.bind(ru.reads, f.pathValue, v)
			if holds, reason := r.holds(ru.when); holds || reason != "" {
				r.outcome(ru, 0, f.path, v, reason)
			}
		}
		for _, st := range p.states {
			r.state(st)
		}
	} else {
		view := [4]string{v.Page, v.Screen, v.Section, v.Component}
		for _, ru := range p.rules {
			if inView(&view, ru.scope) {
				r.rule(ru)
			}
		}
		for _, st := range p.states {
			if inView(&view, st.scope) {
				r.state(st)
			}
		}
	}
	r.messages()
	switch {
	case direct:
		res.Findings, r.findings = r.findings, scratch
	case len(r.findings) == 0:
		res.Findings = []Finding{}
	default:
		res.Findings = append(make([]Finding, 0, len(r.findings)), r.findings...)
	}
	states := res.States
	if states == nil {
		states = res.spare
	}
	// Nothing of the request stays reachable from the pool: states clears the slots it reads. The
	// findings scratch is not cleared (each pointer cleared costs a write barrier while the
	// collector runs): it holds the ruleset's strings and messages already handed out in
	// results, until overwritten.
	if r.nset > 0 {
		res.States, res.props = r.states(states, res.props)
		res.spare = nil
	} else {
		res.States, res.spare = nil, states[:0] // kept for the next evaluation into res
	}
	r.findings = r.findings[:0]
	if r.npending > 0 {
		clear(r.pending[:r.npending])
		r.npending = 0
	}
	// only the globals an evaluation sets can be other than null: the machine never writes them
	_ = g[gField]
	g[gData], g[gOriginal], g[gActor], g[gCtx], g[gValue], g[gField] = nil, nil, nil, nil, nil, nil
	r.m.End()
	if cap(r.msgs) > 1<<16 {
		r.msgs = nil
	}
	if cap(r.findings) > 1<<10 {
		r.findings = nil
	}
	if !p.idle.CompareAndSwap(nil, r) {
		runPool.Put(r)
	}
}

// messages gives the findings whose messages were written to the message buffer (msgAt) their
// text: one string for all of them, so that an evaluation allocates once for its messages.
func (r *run) messages() {
	if len(r.msgAt) == 0 {
		return
	}
	all := string(r.msgs)
	for _, m := range r.msgAt {
		r.findings[m.finding].Message = all[m.start:m.end]
	}
	r.msgs = r.msgs[:0]
	r.msgAt = r.msgAt[:0]
}

// msgSpan is where a finding's message lies in the message buffer.
type msgSpan struct{ finding, start, end int }

// locales finds the catalog chain of the request's locale: built at load for no locale and the
// tags of the catalogs, looked up here for any other.
func (r *run) locales(tag string) {
	var c *chain
	if tag == "" {
		c = r.p.noTag
	} else if c = r.p.chains[tag]; c == nil {
		if c = r.p.chainOf(tag); c == nil {
			r.own.resolve(r.p, tag)
			c = &r.own
		}
	}
	if r.chain != c {
		r.chain = c
	}
}

// chainOf returns the chain of an ASCII tag of up to 64 bytes, nil for any other. The chain of
// a tag is that of the longest prefix of its lower-cased form (ending before a '-') that a
// catalog has, since resolve finds no catalog for the longer ones; without one it is that of no
// locale. The lower-cased prefixes are looked up without making strings.
func (p *Program) chainOf(tag string) *chain {
	var buf [64]byte
	if len(tag) > len(buf) {
		return nil
	}
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		if c >= 0x80 {
			return nil
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	t := buf[:len(tag)]
	for {
		if cat := p.catalogs[string(t)]; cat != nil {
			return cat.chain
		}
		i := bytes.LastIndexByte(t, '-')
		if i < 0 {
			return p.noTag
		}
		t = t[:i]
	}
}

// chain is the catalogs messages are looked up in, in order: a locale's, those of each shorter
// prefix of its tag, the default locale's.
type chain struct {
	cats       [8]*catalog
	n          int
	ruleFailed []ruleset.Part // the template of RULE_FAILED in the first catalog that has one
	hasFailed  bool
	failedAt   int // the index of that catalog, or Program.ncats for the built-in text
}

// resolve sets c to the chain of tag.
func (c *chain) resolve(p *Program, tag string) {
	*c = chain{}
	add := func(t string) {
		cat := p.catalogs[t]
		if cat == nil {
			return
		}
		for i := 0; i < c.n; i++ {
			if c.cats[i] == cat {
				return
			}
		}
		if c.n < len(c.cats) {
			c.cats[c.n] = cat
			c.n++
		}
	}
	if tag != "" {
		t := lower(tag)
		for {
			add(t)
			i := strings.LastIndexByte(t, '-')
			if i < 0 {
				break
			}
			t = t[:i]
		}
	}
	add(p.defaultLower)
	c.failedAt = p.ncats
	for i := 0; i < c.n; i++ {
		if t, ok := c.cats[i].messages[diag.RuleFailed]; ok {
			c.ruleFailed, c.hasFailed, c.failedAt = t, true, c.cats[i].index
			break
		}
	}
}

// lower is strings.ToLower for the ASCII tags the request check lets through, without
// allocating when the tag is lower case already.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(s)
		}
	}
	return s
}

// message returns the rule's template in the first catalog of the chain that has its key.
func (r *run) message(ru *rule) *message {
	c := r.chain
	for i := 0; i < c.n; i++ {
		if m := &ru.messages[c.cats[i].index]; m.ok {
			return m
		}
	}
	return nil
}

func (r *run) eval(prog *machine.Program) (any, error) {
	v, err := r.m.Run(prog)
	if err != nil {
		return nil, err
	}
	return canonical(v)
}

// canonical returns the canonical form of a result, or the error of one beyond the range of a
// double.
func canonical(v any) (any, error) {
	switch v.(type) {
	case bool, string, nil:
		return v, nil // canonical as they are
	}
	out, ok := value.Canonical(v)
	if !ok {
		return nil, errOutOfRange
	}
	return out, nil
}

// errOutOfRange is canonical's error, made once: a rule that fails closed reads only its code.
var errOutOfRange = diag.ResultOutOfRange("")

// truth reads the result of a condition: whether it holds (true; false and null do not), or why
// the rule fails closed. Any other result is an evaluation error, as eval's out-of-range error
// is, so the result need not be made canonical first.
func truth(v any, err error) (holds bool, reason string) {
	if err != nil {
		return false, code(err)
	}
	if b, ok := v.(bool); ok { // (one comparison of the type, where a switch makes two)
		return b, ""
	}
	if v == nil {
		return false, ""
	}
	return false, diag.EvaluationError
}

// holds runs a condition and reads its result as truth does: a program that is a condition
// (machine.Program.IsCondition) through Machine.Test, which hands its boolean over unboxed.
func (r *run) holds(p *machine.Program) (bool, string) {
	if p.IsCondition() {
		b, err := r.m.Test(p)
		if err != nil {
			return false, code(err)
		}
		return b, ""
	}
	return truth(r.m.Run(p))
}

// byPath records the outcome of a oneField rule whose condition read the field by its path
// (rule.byPath) and held (err nil) or failed.
func (r *run) byPath(ru *rule, err error) {
	f := ru.single
	v := r.m.Value(f.memo)
	r.bind(ru.reads, f.pathValue, v)
	if err != nil {
		r.failed(ru.id, &ru.loc, ru.fails, 0, f.path, code(err))
		return
	}
	r.found(ru, 0, f.path, v)
}

func (r *run) rule(ru *rule) {
	if ru.oneField {
		// check's work inline: its call and arguments cost as much as the common case, a
		// condition that does not hold
		f := ru.single
		v := r.m.Value(f.memo)
		r.bind(ru.reads, f.pathValue, v)
		if holds, reason := r.holds(ru.when); holds || reason != "" {
			r.outcome(ru, 0, f.path, v, reason)
		}
		return
	}
	switch {
	case ru.hasType:
		slot := 0 // see rule.nslots
		for _, b := range ru.typed {
			if !b.many {
				var v any
				if b.field.memo != nil {
					v = r.m.Value(b.field.memo)
				} else {
					v = lookup(lookup(r.globals[gData], b.entity), b.field.segs)
				}
				r.bind(ru.reads, b.pathValue, v)
				r.check(ru, slot, b.path, v)
				slot++
				continue
			}
			var base any
			if b.entityMemo != nil {
				base = r.m.Value(b.entityMemo)
			} else {
				base = lookup(r.globals[gData], b.entity)
			}
			list, _ := base.([]any)
			for i, el := range list {
				var v any
				switch m, ok := el.(map[string]any); {
				case b.elem != nil && b.elem.Shared():
					v = r.m.Elem(b.elem, i, el) // kept: other rules read it too
				case ok && len(b.field.segs) == 1:
					v = m[b.field.segs[0]] // lookup's common case, without the call
				default:
					v = lookup(el, b.field.segs)
				}
				if i < len(b.paths) {
					r.bind(ru.reads, b.pathValues[i], v)
					r.check(ru, slot+i, b.paths[i], v)
					continue
				}
				path := b.prefix + itoa(i) + b.suffix
				r.bind(ru.reads, path, v)
				r.check(ru, -1, path, v)
			}
			slot += len(b.paths)
		}
	case ru.wild:
		r.wildFields(ru)
	case ru.missing != "":
		r.unavailable(ru)
	case len(ru.fields) == 1:
		// The cases below do check's work inline: its call and arguments cost as much as the
		// common case, a condition that does not hold. One field, the most common, goes
		// without the loop.
		f := &ru.fields[0]
		var v any
		if f.memo != nil {
			v = r.m.Value(f.memo)
		} else {
			v = lookup(r.globals[gData], f.segs)
		}
		r.bind(ru.reads, f.pathValue, v)
		if holds, reason := r.holds(ru.when); holds || reason != "" {
			r.outcome(ru, 0, f.path, v, reason)
		}
	case len(ru.fields) > 0:
		for i := range ru.fields {
			f := &ru.fields[i]
			var v any
			if f.memo != nil {
				v = r.m.Value(f.memo)
			} else {
				v = lookup(r.globals[gData], f.segs)
			}
			r.bind(ru.reads, f.pathValue, v)
			if holds, reason := r.holds(ru.when); holds || reason != "" {
				r.outcome(ru, i, f.path, v, reason)
			}
		}
	default:
		r.unbind(ru.reads)
		if holds, reason := r.holds(ru.when); holds || reason != "" {
			r.outcome(ru, 0, "", nil, reason)
		}
	}
}

// wildFields runs a rule whose fields include a wildcard: a static field on its slot, each
// element path of a wildcard (ruleset.md §3) on a path built now.
func (r *run) wildFields(ru *rule) {
	for i := range ru.fields {
		f := &ru.fields[i]
		if f.wildAt < 0 {
			var v any
			if f.memo != nil {
				v = r.m.Value(f.memo)
			} else {
				v = lookup(r.globals[gData], f.segs)
			}
			r.bind(ru.reads, f.pathValue, v)
			r.check(ru, i, f.path, v)
			continue
		}
		var base any
		if f.memo != nil {
			base = r.m.Value(f.memo)
		} else {
			base = lookup(r.globals[gData], f.segs[:f.wildAt])
		}
		r.expand(ru, base, f.segs[f.wildAt:], strings.Join(f.segs[:f.wildAt], "."))
	}
}

// expand runs ru on each path under v that segs names, "*" standing for every element of an
// array (none when v is not one); path is where v is.
func (r *run) expand(ru *rule, v any, segs []string, path string) {
	for i, s := range segs {
		if s == "*" {
			list, _ := v.([]any)
			for j, el := range list {
				r.expand(ru, el, segs[i+1:], joinPath(path, itoa(j)))
			}
			return
		}
		v = lookup(v, segs[i:i+1])
		path = joinPath(path, s)
	}
	r.bind(ru.reads, path, v)
	r.check(ru, -1, path, v)
}

func joinPath(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "." + seg
}

// unavailable fails a rule that needs a custom operator the host lacks on each of its fields
// (see check), its conditions not run.
func (r *run) unavailable(ru *rule) {
	if len(ru.fields) == 0 {
		r.failed(ru.id, &ru.loc, ru.fails, 0, "", diag.OperatorUnavailable)
		return
	}
	for i := range ru.fields {
		r.failed(ru.id, &ru.loc, ru.fails, i, ru.fields[i].path, diag.OperatorUnavailable)
	}
}

// unbind clears value and field for a rule run on no field, where it may read them.
func (r *run) unbind(reads uint8) {
	if reads&readsValue != 0 {
		r.globals[gValue] = nil
	}
	if reads&readsField != 0 {
		r.globals[gField] = nil
	}
}

// bind sets value and field for a rule checked on one field, those of them it may read;
// fieldValue is the field path as an interface value, boxed once at load for static paths.
func (r *run) bind(reads uint8, fieldValue, v any) {
	if reads&readsValue != 0 {
		r.globals[gValue] = v
	}
	if reads&readsField != 0 {
		r.globals[gField] = fieldValue
	}
}

// check checks a rule on one field, whose path is that of slot (see rule.nslots) or, when slot
// is -1, one built at evaluation.
func (r *run) check(ru *rule, slot int, field string, v any) {
	if ru.missing != "" {
		r.failed(ru.id, &ru.loc, ru.fails, slot, field, diag.OperatorUnavailable)
		return
	}
	if ru.when.IsCondition() {
		// holds without its call: check runs once per element of a list
		if holds, err := r.m.Test(ru.when); err != nil {
			r.failed(ru.id, &ru.loc, ru.fails, slot, field, code(err))
		} else if holds {
			r.found(ru, slot, field, v)
		}
		return
	}
	if holds, reason := truth(r.m.Run(ru.when)); holds || reason != "" {
		r.outcome(ru, slot, field, v, reason)
	}
}

// outcome records the finding of a rule whose condition held (reason "") or failed.
func (r *run) outcome(ru *rule, slot int, field string, v any, reason string) {
	if reason != "" {
		r.failed(ru.id, &ru.loc, ru.fails, slot, field, reason)
		return
	}
	r.found(ru, slot, field, v)
}

// found records the finding of a rule whose condition holds.
func (r *run) found(ru *rule, slot int, field string, v any) {
	// parameters are evaluated even when the message does not show them: one that fails makes
	// the rule fail closed
	vals := r.vals[:0]
	for _, prog := range ru.dyn {
		pv, err := r.eval(prog)
		if err != nil {
			clear(vals)
			r.failed(ru.id, &ru.loc, ru.fails, slot, field, code(err))
			return
		}
		vals = append(vals, pv)
	}
	if cap(vals) > cap(r.vals) {
		r.vals = vals[:0] // grown
	}
	m := r.message(ru)
	var msg string
	switch {
	case m == nil:
	case m.static:
		msg = m.text
	case m.byField.n > 0 && slot >= 0:
		if s, ok := m.byField.load(slot); ok {
			msg = s
			break
		}
		msg = m.byField.store(slot, r.text(m.parts, vals, field, v))
	default:
		start := len(r.msgs)
		r.msgs = appendMessage(r.msgs, m.parts, vals, field, v)
		r.msgAt = append(r.msgAt, msgSpan{len(r.findings), start, len(r.msgs)})
	}
	if len(vals) > 0 {
		clear(vals) // nothing of the request stays in the scratch
	}
	f := r.finding()
	f.Code, f.Severity, f.Message, f.Field, f.Rule, f.Location = ru.code, ru.severity, msg, field, ru.id, ru.loc
}

// finding adds a finding to the scratch, for the caller to write every member of: one by one,
// since a composite literal would be built on the stack and then copied.
func (r *run) finding() *Finding {
	n := len(r.findings)
	if n == cap(r.findings) {
		r.findings = append(r.findings, Finding{})
	} else {
		r.findings = r.findings[:n+1]
	}
	return &r.findings[n]
}

// appendMessage appends the message of a template's parts.
func appendMessage(b []byte, parts []part, vals []any, field string, v any) []byte {
	for _, part := range parts {
		switch {
		case part.param >= 0:
			b = appendText(b, vals[part.param])
		case part.param == partField:
			b = append(b, field...)
		case part.param == partValue:
			b = appendText(b, v)
		default:
			b = append(b, part.text...)
		}
	}
	return b
}

// text returns a message of parts as a string of its own, written in the message buffer's spare
// capacity.
func (r *run) text(parts []part, vals []any, field string, v any) string {
	start := len(r.msgs)
	b := appendMessage(r.msgs, parts, vals, field, v)
	s := string(b[start:])
	r.msgs = b[:start]
	return s
}

func code(err error) string {
	if d, ok := err.(*diag.Diagnostic); ok {
		return d.Code
	}
	return diag.Internal
}

// reasons are the codes of evaluation errors, which a rule fails closed with (see failed).
var reasons = [...]string{diag.EvaluationError, diag.EvaluationLimit, diag.OperatorFailed,
	diag.OperatorUnavailable, diag.Internal}

func reasonIndex(reason string) int {
	for i, c := range reasons {
		if c == reason {
			return i
		}
	}
	return -1
}

// failed records a rule that failed closed: a RULE_FAILED error finding whose message is the
// catalog's RULE_FAILED template (parameters rule, reason, field) or the built-in English text.
// The message depends on the rule, the template, the reason and the field only, so that of a
// static field path (slot >= 0) and a known reason is built once and kept in fails.
func (r *run) failed(id string, l *Location, fails []texts, slot int, field, reason string) {
	var msg string
	t := &fails[r.chain.failedAt]
	i := reasonIndex(reason)
	if t.field && i >= 0 {
		i += slot * len(reasons)
		if slot < 0 {
			i = -1
		}
	}
	if i >= 0 && i < t.n {
		var ok bool
		if msg, ok = t.load(i); !ok {
			start := len(r.msgs)
			b := r.appendFailed(r.msgs, id, field, reason)
			msg = t.store(i, string(b[start:]))
			r.msgs = b[:start]
		}
	} else {
		start := len(r.msgs)
		r.msgs = r.appendFailed(r.msgs, id, field, reason)
		r.msgAt = append(r.msgAt, msgSpan{len(r.findings), start, len(r.msgs)})
	}
	f := r.finding()
	f.Code, f.Severity, f.Message, f.Field, f.Rule, f.Location = diag.RuleFailed, "error", msg, field, id, *l
}

// appendFailed appends the message of a RULE_FAILED finding.
func (r *run) appendFailed(b []byte, id, field, reason string) []byte {
	if !r.chain.hasFailed {
		return append(append(append(append(b, "rule "...), id...), " failed closed: "...), reason...)
	}
	for _, part := range r.chain.ruleFailed {
		switch {
		case !part.Param:
			b = append(b, part.Text...)
		case part.Text == "rule":
			b = append(b, id...)
		case part.Text == "reason":
			b = append(b, reason...)
		case part.Text == "field":
			b = append(b, field...)
		default:
			b = append(append(append(b, '{'), part.Text...), '}')
		}
	}
	return b
}

// texts are messages that depend on the ruleset only (and on which of a fixed set of reasons
// a rule failed for): a table of n, built on first use and kept for the program's life, so that
// their findings allocate nothing. The table is allocated when the first is stored. Evaluations
// running at the same time may build the same message; they build the same text.
type texts struct {
	tab   atomic.Pointer[[]atomic.Pointer[string]]
	n     int
	field bool // RULE_FAILED's: indexed by slot and reason, not by reason alone
}

func (t *texts) load(i int) (string, bool) {
	if tab := t.tab.Load(); tab != nil {
		if s := (*tab)[i].Load(); s != nil {
			return *s, true
		}
	}
	return "", false
}

// store keeps s as message i and returns it.
func (t *texts) store(i int, s string) string {
	tab := t.tab.Load()
	if tab == nil {
		fresh := make([]atomic.Pointer[string], t.n)
		if t.tab.CompareAndSwap(nil, &fresh) {
			tab = &fresh
		} else {
			tab = t.tab.Load()
		}
	}
	(*tab)[i].Store(&s)
	return s
}

type change struct {
	field, prop string
	v           any
}

// state applies the effects of a state rule, all or none.
func (r *run) state(st *state) {
	r.unbind(st.reads)
	if st.missing != "" {
		r.failed(st.id, &st.loc, st.fails, 0, "", diag.OperatorUnavailable)
		return
	}
	holds, reason := r.holds(st.when)
	if reason != "" {
		r.failed(st.id, &st.loc, st.fails, 0, "", reason)
		return
	}
	if !holds {
		return
	}
	// all or none: the properties that are not constant are evaluated, their values kept aside on
	// the stack (no write barrier, nothing to clear), before any is set
	var buf [4]any
	vals := buf[:]
	if len(st.run) > len(buf) {
		if len(r.pending) < len(st.run) {
			r.pending = make([]any, len(st.run))
		}
		vals, r.npending = r.pending, max(r.npending, len(st.run)) // cleared at the end
	}
	for i, pm := range st.run {
		v, err := r.m.Run(pm.prog)
		if err == nil {
			if _, isBool := v.(bool); !isBool {
				if pm.value {
					v, err = canonical(v)
				} else {
					err = errNotBoolean
				}
			}
		}
		if err != nil {
			r.failed(st.id, &st.loc, st.fails, 0, "", code(err))
			return
		}
		vals[i] = v
	}
	for i := range st.props {
		pm := &st.props[i]
		v := pm.konst
		if pm.run >= 0 {
			v = vals[pm.run]
		}
		r.slotVals[pm.slot] = v
		if r.slotBits[pm.word]&pm.bit == 0 {
			r.slotBits[pm.word] |= pm.bit
			r.nset++
		}
	}
}

// errNotBoolean is a state property other than value that is not a boolean.
var errNotBoolean = &diag.Diagnostic{Code: diag.EvaluationError}

// states reads the set slots out as States into the storage of out and props (allocating them
// when too small) and clears the slots for the next evaluation.
func (r *run) states(out States, props []Property) (States, []Property) {
	if cap(props) < r.nset {
		props = make([]Property, r.nset)
	}
	// there are at most as many fields as slots: a new result gets room for the fields exactly,
	// a reused one that may be short room for one field per slot (so that it is not short again
	// for as many slots)
	if cap(out) < r.nset {
		if cap(out) == 0 {
			out = make(States, r.fields())
		} else {
			out = make(States, r.nset)
		}
	}
	props, out = props[:r.nset], out[:cap(out)]
	// each field's properties are a run of set slots; a field's are given it when its run ends.
	// (Members are written one by one: a composite literal would be built on the stack first.)
	slots, vals, slotBits := r.p.slots, r.slotVals, r.slotBits
	k, f, start, last := 0, -1, 0, -1
	for w := range slotBits {
		bits := slotBits[w]
		for ; bits != 0; bits &= bits - 1 {
			i := w*64 + mbits.TrailingZeros64(bits)
			sl := &slots[i]
			if sl.fieldAt != last {
				if f >= 0 {
					out[f].Props = props[start:k:k]
				}
				f, start, last = f+1, k, sl.fieldAt
				out[f].Field = sl.field
			}
			p := &props[k]
			p.Name, p.Value = sl.prop, vals[i]
			vals[i] = nil
			k++
		}
	}
	out[f].Props = props[start:k:k]
	clear(slotBits)
	r.nset = 0
	return out[:f+1], props
}

// fields counts the fields of the set slots.
func (r *run) fields() int {
	slots := r.p.slots
	n, last := 0, -1
	for w, bits := range r.slotBits {
		for ; bits != 0; bits &= bits - 1 {
			if at := slots[w*64+mbits.TrailingZeros64(bits)].fieldAt; at != last {
				n, last = n+1, at
			}
		}
	}
	return n
}

// buildStates turns the changes of an evaluation into States with two allocations: changes are
// sorted by field and property (stable, so that of equal ones the last applied is last) and the
// last of each pair wins.
func buildStates(changes []change) States {
	less := func(a, b *change) bool {
		if a.field != b.field {
			return jcs.Less(a.field, b.field)
		}
		return jcs.Less(a.prop, b.prop)
	}
	if len(changes) <= 32 {
		for i := 1; i < len(changes); i++ {
			for j := i; j > 0 && less(&changes[j], &changes[j-1]); j-- {
				changes[j], changes[j-1] = changes[j-1], changes[j]
			}
		}
	} else {
		sort.SliceStable(changes, func(i, j int) bool { return less(&changes[i], &changes[j]) })
	}
	// keep the last of each field and property
	n := 0
	for i := range changes {
		if i+1 < len(changes) && changes[i+1].field == changes[i].field && changes[i+1].prop == changes[i].prop {
			continue
		}
		changes[n] = changes[i]
		n++
	}
	changes = changes[:n]
	fields := 0
	for i := range changes {
		if i == 0 || changes[i].field != changes[i-1].field {
			fields++
		}
	}
	out := make(States, 0, fields)
	props := make([]Property, len(changes))
	start := 0
	for i, c := range changes {
		props[i] = Property{Name: c.prop, Value: c.v}
		if i+1 == len(changes) || changes[i+1].field != c.field {
			// a field's properties end here; each field's list has its own capacity
			out = append(out, FieldState{Field: c.field, Props: props[start : i+1 : i+1]})
			start = i + 1
		}
	}
	return out
}

// lookup reads a path from a value as variables do: object members by name, array elements by
// runs of ASCII digits, null for anything absent.
func lookup(v any, segs []string) any {
	for _, s := range segs {
		if m, ok := v.(map[string]any); ok { // (objects first, with one comparison of the type)
			v = m[s]
			continue
		}
		t, ok := v.([]any)
		if !ok {
			return nil
		}
		i := index(s)
		if i < 0 || i >= len(t) {
			return nil
		}
		v = t[i]
	}
	return v
}

func index(s string) int {
	if s == "" {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return -1
		}
		if n > 1<<40 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func itoa(i int) string { return diag.Index("", i)[1:] }

// appendText appends what Text returns for v.
func appendText(b []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return b
	case string:
		return append(b, t...)
	case bool:
		return strconv.AppendBool(b, t)
	case float64:
		b, _ = num.AppendFormat(b, t)
		return b
	}
	if out, err := AppendJSON(b, v); err == nil {
		return out
	}
	return b
}

// Text writes a message parameter: strings as they are, numbers in canonical form, true and
// false, null as nothing, arrays and objects as canonical JSON.
func Text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		if t {
			return "true"
		}
		return "false"
	case float64:
		s, _ := num.Format(t)
		return s
	}
	b, _ := AppendJSON(nil, v)
	return string(b)
}
