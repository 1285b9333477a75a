// Package rules is the ruleset layer: it compiles a resolved ruleset (package ruleset) into a
// Program of rules whose conditions are machine programs (each expression parsed once by package
// syntax, what it uses read from the unit's analysis, then compiled by package machine), and
// evaluates requests against them: the shape check, views, semantic type
// bindings, findings with messages from the locale catalogs, state rules, and rules that fail
// closed.
package rules

import (
	"sort"
	"strings"
	"sync/atomic"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jcs"
	"github.com/sdods/sdods/engine/internal/machine"
	"github.com/sdods/sdods/engine/internal/ruleset"
	"github.com/sdods/sdods/engine/internal/syntax"
)

// Ref identifies a compiled ruleset.
type Ref struct {
	ID       string `json:"id"`
	Version  string `json:"version"`
	Checksum string `json:"checksum"`
}

// Program is the compiled rules of one ruleset (all channels); ForChannel narrows it.
type Program struct {
	Ref           Ref
	defaultLocale string
	defaultLower  string
	catalogs      map[string]*catalog // lower-cased tag
	ncats         int                 // the catalogs; chain.failedAt of the built-in RULE_FAILED text
	failField     []bool              // whether RULE_FAILED's template uses {field}, by chain.failedAt
	noTag         *chain              // the catalog chain of a request without a locale
	chains        map[string]*chain   // of the catalogs' tags, as written and lower-cased
	rules         []*rule
	states        []*state
	declared      []string
	ops           map[string]machine.Operator
	budget        int64
	nglobals      int // variable roots of the unit: the globals below, then any other root read
	slots         []stateSlot
	reads         *readPlan // what the rules read of the request roots, for EvaluateJSONInto
	// idle is a run kept for the next evaluation of this program: a host evaluating one request
	// after another takes and returns it with one atomic operation each, where the pool (for
	// evaluations at the same time) costs a pin to the processor and two calls
	// (its own for each program, ForChannel's included)
	idle *atomic.Pointer[run]
}

// Global indexes of the variables an evaluation sets (machine.Config.Globals); any other root
// an expression reads gets a later index and stays null.
const (
	gData = iota
	gOriginal
	gActor
	gCtx
	gValue
	gField
)

// varyingRoots change from one field to the next within an evaluation.
var varyingRoots = []string{"value", "field"}

var globalRoots = []string{gData: "data", gOriginal: "original", gActor: "actor", gCtx: "ctx", gValue: "value", gField: "field"}

type catalog struct {
	tag      string
	index    int // in rule.messages
	messages map[string][]ruleset.Part
	chain    *chain // the chain of its lower-cased tag (see run.locales)
}

// message is a rule's message template in one catalog, resolved at load: placeholders bound to
// the rule's parameters, field or value, and those of constant parameters replaced by their text.
type message struct {
	ok     bool   // the catalog has the key
	static bool   // the message is text: no placeholder other than constant parameters
	text   string // when static
	parts  []part
	// when the parts are text and the field only, the messages of the rule's static field
	// paths (by slot, see rule.nslots), built on first use
	byField texts
}

// part is literal text (param == partText) or a placeholder: the index of a parameter in
// rule.dyn, partField or partValue.
type part struct {
	text  string
	param int
}

const (
	partText  = -1
	partField = -2
	partValue = -3
)

type expr struct {
	name    string
	prog    *machine.Program
	literal bool // a JSON scalar: its value does not depend on the request
}

// stateSlot is one property of one field that some state rule may set. A program's slots are
// in the order of the result's States (field paths, then property names, in RFC 8785 order), so
// an evaluation writes each value to its slot, the later rule winning, and reads them out in
// order without sorting.
type stateSlot struct {
	field, prop string
	fieldAt     int // index of field among the fields of the slots, to tell fields apart quickly
}

type rule struct {
	id, code, severity string
	loc                Location
	scope              []scoped // what inView compares
	channels           []string
	fields             []fieldRef
	wild               bool       // some field is a wildcard: its runs are found at evaluation
	typed              []*binding // bindings of the target type, nil when the rule has none
	hasType            bool
	when               *machine.Program
	key                string
	messages           []message // by catalog index
	params             []expr
	// the parameters whose value depends on the request, run for each finding; the others
	// (literals) were evaluated at load, which gives the same value every time
	dyn     []*machine.Program
	missing string // a custom operator the rule needs that the host lacks
	reads   uint8  // readsValue, readsField: whether the expressions may read them
	// nslots counts the field paths the rule is checked on that are known at load: its fields,
	// or those of its type's bindings (the first listPaths elements of a list), or the one path
	// "" when it has neither. A check passes the slot of its path, -1 for one built at evaluation.
	nslots int
	fails  []texts // RULE_FAILED messages by failure template (chain.failedAt)
	// oneField: the rule is checked on exactly one static field, single, with all its
	// operators (the common case, which run.rule tests first, with one comparison): its one
	// field, or the one field of its type, bound in a single record
	oneField bool
	single   *fieldRef
	// byPath: the condition of a oneField rule is a test (machine.Program.IsCondition) that
	// reads value as the field's path (see machine.Unit.CompileAliasUses), so value and field
	// are bound only for a finding
	byPath bool
	// noField: the rule is checked on no field, and its condition is a test
	noField bool
}

// What a rule's or state rule's expressions may read of the variables the engine sets per
// field; the engine sets (or clears) only those, since nothing else can observe them.
const (
	readsValue uint8 = 1 << iota
	readsField
)

type state struct {
	id       string
	loc      Location
	scope    []scoped
	channels []string
	when     *machine.Program
	effects  []effect
	props    []effectProp // the properties of the effects, in order, as an evaluation needs them
	run      []effectRun  // those of them that are not constant, in order
	missing  string
	reads    uint8
	fails    []texts // RULE_FAILED messages by failure template (chain.failedAt); the one slot is ""
}

// effectProp is one property a state rule sets.
type effectProp struct {
	slot int    // in Program.slots
	word int    // slot/64, the word of run.slotBits with the slot's bit
	bit  uint64 // 1 << (slot%64)
	// konst is the value of a property written as true or false (hidden: true), set without
	// running its program, which could not fail (see machine.Program.ConstantBool); otherwise
	// run is the index of the property in state.run
	konst any
	run   int
}

// effectRun is a property of a state rule that is run at evaluation.
type effectRun struct {
	prog  *machine.Program
	value bool // the property value, which may be any JSON value; the others are booleans
}

type effect struct {
	field string
	props []expr
}

// fieldRef is a field path of a rule's target: static, or a wildcard (a segment "*" standing
// for every element of an array, ruleset.md §3) whose runs' paths are found at evaluation.
type fieldRef struct {
	path      string
	pathValue any // path as an interface value, boxed once
	segs      []string
	memo      *machine.Path // data.path (for a wildcard: data.prefix, the part before the first "*"), memoized within an evaluation
	wildAt    int           // the index of the first "*" in segs, or -1
}

// listPaths is how many element paths of a list binding are built at load.
const listPaths = 32

// binding is one field bound to a type through an entity.
type binding struct {
	entity     []string      // path of the record, or of the list when many
	entityMemo *machine.Path // data.entity when many, memoized within an evaluation
	many       bool
	elem       *machine.Elem // for lists: the field under the elements of data.entity
	field      fieldRef      // path inside the record
	path       string        // entity path + "." + field, for single records
	// for lists: the path of element i is prefix + i + suffix; those of the first elements are
	// built at load
	pathValue      any
	prefix, suffix string
	paths          []string
	pathValues     []any
}

// Compile compiles every expression of rs and resolves type bindings. ops are the host's custom
// operators; a rule that needs a declared operator the host lacks fails closed at evaluation.
// It reports every problem.
func Compile(rs *ruleset.Ruleset, ref Ref, ops map[string]machine.Operator, budget int64) (*Program, diag.List) {
	var ds diag.List
	declared := make([]string, 0, len(rs.Operators))
	for _, o := range rs.Operators {
		declared = append(declared, o.Name)
	}
	defs := make([]machine.FunctionDef, 0, len(rs.Functions))
	for _, f := range rs.Functions {
		defs = append(defs, machine.FunctionDef{Name: f.Name, Params: f.Params, ParamAt: f.ParamAt, Body: f.Body, Pointer: f.Ptr, Malformed: f.Malformed})
	}
	cfg := machine.Config{Operators: declared, Functions: defs, Globals: globalRoots, Varying: varyingRoots}
	unit, uds := machine.NewUnit(cfg)
	if len(uds) > 0 {
		ds = append(ds, uds...)
		// Keep checking the rules against stand-in functions, so a load reports the problems
		// of the rules too.
		unit = machine.NewStandInUnit(cfg)
	}
	c := &compiler{unit: unit, ops: ops}
	p := &Program{idle: new(atomic.Pointer[run]), Ref: ref, defaultLocale: rs.DefaultLocale, defaultLower: strings.ToLower(rs.DefaultLocale),
		catalogs: map[string]*catalog{}, declared: declared, ops: ops, budget: budget}
	sort.Strings(p.declared)
	var cats []*catalog
	for _, cat := range rs.Locales {
		cc := &catalog{tag: cat.Tag, index: len(cats), messages: map[string][]ruleset.Part{}}
		cats = append(cats, cc)
		for _, m := range cat.Messages {
			parts, _, _ := ruleset.ParseTemplate(m.Template)
			cc.messages[m.Key] = parts
		}
		p.catalogs[strings.ToLower(cat.Tag)] = cc
	}
	p.ncats = len(cats)
	p.resolveChains(cats)
	p.failField = make([]bool, len(cats)+1) // the built-in text has no field
	for i, cat := range cats {
		for _, pt := range cat.messages[diag.RuleFailed] {
			p.failField[i] = p.failField[i] || pt.Param && pt.Text == "field"
		}
	}
	bindings := typeBindings(rs)
	for _, bs := range bindings {
		for _, b := range bs {
			if b.many {
				// the list is read (a single record only through its field: see Unit.Reads)
				b.entityMemo = unit.Path("data", b.entity)
			} else {
				b.field.memo = unit.Path("data", append(append([]string(nil), b.entity...), b.field.segs...))
			}
		}
	}
	for _, r := range rs.Rules {
		cr := &rule{id: r.ID, code: r.Code, severity: r.Severity, loc: loc(r.Target), channels: r.Channels, key: r.Key}
		cr.scope = scopeOf(levelIndex(r.Scope), &cr.loc)
		for _, f := range r.Target.Fields {
			segs := strings.Split(f, ".")
			ref := fieldRef{path: f, pathValue: f, segs: segs, wildAt: -1}
			for i, s := range segs {
				if s == "*" {
					ref.wildAt = i
					break
				}
			}
			if ref.wildAt >= 0 {
				cr.wild = true
				ref.memo = unit.Path("data", segs[:ref.wildAt]) // the list is read whole
			} else {
				ref.memo = unit.Path("data", segs)
			}
			cr.fields = append(cr.fields, ref)
		}
		if r.Target.Type != "" {
			cr.hasType = true
			cr.typed = bindings[r.Target.Type]
			for _, b := range cr.typed {
				if b.many {
					// the rule reads the field in every element (see machine.Elem)
					b.elem = unit.Elem(b.entityMemo, b.field.segs)
				}
			}
		}
		var used []syntax.Info
		if r.When != nil {
			e := syntax.Parse(r.When, r.Ptr+"/when")
			if cr.single = singleField(cr); cr.single != nil {
				cr.when, cr.byPath = c.compileByPath(e, cr.single.segs, &used)
			} else {
				cr.when = c.compile(e, &used)
			}
		}
		for _, pm := range r.Params {
			e := syntax.Parse(pm.Expr, pm.Ptr)
			k := e.Kind
			lit := k == syntax.Null || k == syntax.Bool || k == syntax.String || k == syntax.Number
			cr.params = append(cr.params, expr{name: pm.Name, prog: c.compile(e, &used), literal: lit})
		}
		cr.missing, cr.reads = c.uses(used)
		cr.nslots = fieldSlots(cr)
		if cr.single == nil {
			cr.single = singleField(cr)
		}
		cr.oneField = cr.single != nil && cr.missing == ""
		cr.byPath = cr.byPath && cr.oneField && cr.when.IsCondition()
		cr.noField = !cr.hasType && !cr.wild && cr.missing == "" && len(cr.fields) == 0 && cr.when != nil && cr.when.IsCondition()
		p.rules = append(p.rules, cr)
	}
	for _, r := range rs.StateRules {
		cs := &state{id: r.ID, loc: loc(r.Target), channels: r.Channels}
		cs.scope = scopeOf(levelIndex(r.Scope), &cs.loc)
		var used []syntax.Info
		cs.when = c.compile(syntax.Parse(r.When, r.Ptr+"/when"), &used)
		for _, e := range r.Effects {
			ce := effect{field: e.Field}
			for _, pm := range e.Props {
				ce.props = append(ce.props, expr{name: pm.Name, prog: c.compile(syntax.Parse(pm.Expr, pm.Ptr), &used)})
			}
			cs.effects = append(cs.effects, ce)
		}
		cs.missing, cs.reads = c.uses(used)
		p.states = append(p.states, cs)
	}
	ds = append(ds, c.diags...)
	if len(ds) > 0 {
		return nil, ds
	}
	p.nglobals = unit.NumGlobals()
	p.reads = planReads(unit, ops)
	p.slots = stateSlots(p.states)
	for _, cr := range p.rules {
		cr.messages = messages(cats, cr, constParams(cr.params, ops, budget))
		cr.fails = p.failTexts(cr.nslots)
	}
	for _, cs := range p.states {
		cs.fails = p.failTexts(1)
	}
	return p, nil
}

// fieldSlots counts the field paths of a rule known at load (see rule.nslots).
// singleField returns the one static field a rule is checked on, in slot 0: its one field, or
// its type's one field in a single record; nil for any other rule.
func singleField(ru *rule) *fieldRef {
	switch f, t := ru.fields, ru.typed; {
	case ru.hasType:
		if len(t) == 1 && !t[0].many && t[0].field.memo != nil {
			b := t[0]
			segs := append(append([]string(nil), b.entity...), b.field.segs...)
			return &fieldRef{path: b.path, pathValue: b.pathValue, segs: segs, memo: b.field.memo, wildAt: -1}
		}
	case !ru.wild && len(f) == 1 && f[0].memo != nil:
		return &f[0]
	}
	return nil
}

func fieldSlots(ru *rule) int {
	switch {
	case ru.hasType:
		n := 0
		for _, b := range ru.typed {
			if b.many {
				n += len(b.paths)
			} else {
				n++
			}
		}
		return n
	case len(ru.fields) > 0:
		return len(ru.fields)
	}
	return 1
}

// constParam is the text of a parameter whose value is known at load.
type constParam struct {
	text string
	ok   bool
}

// constParams evaluates the literal parameters: running one gives the same value (or error,
// under a budget too small for a long string) at every evaluation, and has no other effect, so
// the value's text is kept and the parameter is not run again. Those that fail stay to be run.
func constParams(params []expr, ops map[string]machine.Operator, budget int64) []constParam {
	out := make([]constParam, len(params))
	for i, pm := range params {
		if !pm.literal {
			continue
		}
		v, err := pm.prog.Eval(nil, ops, budget)
		if err == nil {
			v, err = canonical(v)
		}
		if err == nil {
			out[i] = constParam{text: string(appendText(nil, v)), ok: true}
		}
	}
	return out
}

// failTexts is the table of RULE_FAILED messages of a rule checked on nslots static paths.
func (p *Program) failTexts(nslots int) []texts {
	out := make([]texts, len(p.failField))
	for i, field := range p.failField {
		out[i].n, out[i].field = len(reasons), field
		if field {
			out[i].n = nslots * len(reasons)
		}
	}
	return out
}

// resolveChains resolves the catalog chains of no locale and of the catalogs' tags.
func (p *Program) resolveChains(cats []*catalog) {
	p.noTag = new(chain)
	p.noTag.resolve(p, "")
	p.chains = map[string]*chain{}
	for _, cat := range cats {
		for _, t := range []string{cat.tag, strings.ToLower(cat.tag)} {
			c := new(chain)
			c.resolve(p, t)
			p.chains[t] = c
		}
	}
	for t, cat := range p.catalogs {
		cat.chain = p.chains[t]
	}
}

// stateSlots orders the properties the state rules set and gives each effect its slot.
func stateSlots(states []*state) []stateSlot {
	type key struct{ field, prop string }
	var slots []stateSlot
	seen := map[key]bool{}
	for _, st := range states {
		for _, e := range st.effects {
			for _, pm := range e.props {
				k := key{e.field, pm.name}
				if !seen[k] {
					seen[k] = true
					slots = append(slots, stateSlot{field: e.field, prop: pm.name})
				}
			}
		}
	}
	sort.Slice(slots, func(i, j int) bool {
		if slots[i].field != slots[j].field {
			return jcs.Less(slots[i].field, slots[j].field)
		}
		return jcs.Less(slots[i].prop, slots[j].prop)
	})
	index := make(map[key]int, len(slots))
	for i, k := range slots {
		index[key{k.field, k.prop}] = i
		if i > 0 {
			slots[i].fieldAt = slots[i-1].fieldAt
			if k.field != slots[i-1].field {
				slots[i].fieldAt++
			}
		}
	}
	for _, st := range states {
		for _, e := range st.effects {
			for _, pm := range e.props {
				i := index[key{e.field, pm.name}]
				ep := effectProp{slot: i, word: i / 64, bit: 1 << (i % 64), run: -1}
				if b, ok := pm.prog.ConstantBool(); ok {
					ep.konst = b
				} else {
					ep.run = len(st.run)
					st.run = append(st.run, effectRun{prog: pm.prog, value: pm.name == "value"})
				}
				st.props = append(st.props, ep)
			}
		}
	}
	return slots
}

// messages resolves the rule's template in every catalog, given the texts of its constant
// parameters; it sets the rule's dyn to the parameters to run.
func messages(cats []*catalog, ru *rule, konst []constParam) []message {
	dyn := make([]int, len(ru.params)) // index in ru.dyn
	ru.dyn = nil
	for j, pm := range ru.params {
		dyn[j] = -1
		if !konst[j].ok {
			dyn[j] = len(ru.dyn)
			ru.dyn = append(ru.dyn, pm.prog)
		}
	}
	out := make([]message, len(cats))
	for i, c := range cats {
		tmpl, ok := c.messages[ru.key]
		if !ok {
			continue
		}
		var parts []part
		text := func(s string) {
			if n := len(parts); n > 0 && parts[n-1].param == partText {
				parts[n-1].text += s
			} else {
				parts = append(parts, part{text: s, param: partText})
			}
		}
		field, dynamic := false, false
		for _, p := range tmpl {
			if !p.Param {
				text(p.Text)
				continue
			}
			j := -1
			for k, pm := range ru.params {
				if pm.name == p.Text {
					j = k
					break
				}
			}
			switch {
			case j >= 0 && konst[j].ok:
				text(konst[j].text)
			case j >= 0:
				parts, dynamic = append(parts, part{param: dyn[j]}), true
			case p.Text == "field":
				parts, field = append(parts, part{param: partField}), true
			case p.Text == "value":
				parts, dynamic = append(parts, part{param: partValue}), true
			default:
				text("{" + p.Text + "}")
			}
		}
		m := &out[i]
		m.ok, m.parts = true, parts
		switch {
		case !dynamic && !field:
			m.static, m.parts = true, nil
			if len(parts) > 0 {
				m.text = parts[0].text
			}
		case !dynamic:
			m.byField.n = ru.nslots
		}
	}
	return out
}

// ForChannel returns the program restricted to the rules of one channel.
func (p *Program) ForChannel(ch string) *Program {
	q := *p
	q.rules, q.states = nil, nil
	q.idle = new(atomic.Pointer[run])
	for _, r := range p.rules {
		if ruleset.HasChannel(r.channels, ch) {
			q.rules = append(q.rules, r)
		}
	}
	for _, s := range p.states {
		if ruleset.HasChannel(s.channels, ch) {
			q.states = append(q.states, s)
		}
	}
	return &q
}

// Declared returns the custom operators the ruleset declares, sorted.
func (p *Program) Declared() []string { return append([]string(nil), p.declared...) }

type compiler struct {
	unit  *machine.Unit
	diags diag.List
	ops   map[string]machine.Operator
}

// compile checks and compiles e, adding what it uses (by the unit's analysis, see
// machine.Unit.CompileUses) to used.
func (c *compiler) compile(e *syntax.Expr, used *[]syntax.Info) *machine.Program {
	prog, in, ds := c.unit.CompileUses(e)
	c.diags = append(c.diags, ds...)
	*used = append(*used, in)
	return prog
}

// compileByPath is compile for the condition of a rule on the one static field data.segs...: it
// reads value as that path where it can (byPath), which the rule's loop then need not bind
// before the condition runs. A condition that reads field is compiled as it is, since field is
// bound with value.
func (c *compiler) compileByPath(e *syntax.Expr, segs []string, used *[]syntax.Info) (prog *machine.Program, byPath bool) {
	noField := func(in syntax.Info) bool { return !in.Reads("field") }
	prog, in, byPath, ds := c.unit.CompileAliasUses(e, "value", "data", segs, noField)
	c.diags = append(c.diags, ds...)
	*used = append(*used, in)
	return prog, byPath
}

// uses returns, from what a rule's expressions use, the first (in name order) custom operator
// they need, directly or through the functions they call, that the host has not supplied (""
// when none), and what they may read of value and field.
func (c *compiler) uses(used []syntax.Info) (missing string, reads uint8) {
	for _, in := range used {
		for _, o := range in.Custom {
			if c.ops[o] == nil && (missing == "" || o < missing) {
				missing = o
			}
		}
		if in.Reads("value") {
			reads |= readsValue
		}
		if in.Reads("field") {
			reads |= readsField
		}
	}
	return missing, reads
}

func levelIndex(s string) int {
	for i, l := range ruleset.Levels {
		if l == s {
			return i
		}
	}
	return 0
}

func loc(t ruleset.Target) Location {
	return Location{Page: t.Page, Screen: t.Screen, Section: t.Section, Component: t.Component}
}

// typeBindings lists, per type, the fields bound to it: entities ordered by name, and within an
// entity its fields ordered by path, both in RFC 8785 order (UTF-16 code units), the order a
// bundle keeps them in, so a ruleset compiled from source and one read from its bundle agree.
func typeBindings(rs *ruleset.Ruleset) map[string][]*binding {
	out := map[string][]*binding{}
	ents := append([]*ruleset.Entity(nil), rs.Entities...)
	sort.SliceStable(ents, func(i, j int) bool { return jcs.Less(ents[i].Name, ents[j].Name) })
	for _, e := range ents {
		ep := strings.Split(e.Path, ".")
		fields := append([]*ruleset.FieldType(nil), e.Fields...)
		sort.SliceStable(fields, func(i, j int) bool { return jcs.Less(fields[i].Field, fields[j].Field) })
		for _, f := range fields {
			b := &binding{entity: ep, many: e.Many, field: fieldRef{path: f.Field, segs: strings.Split(f.Field, ".")}, path: e.Path + "." + f.Field}
			b.pathValue = b.path
			if e.Many {
				b.prefix, b.suffix = strings.Join(ep, ".")+".", "."+f.Field
				for i := 0; i < listPaths; i++ {
					p := b.prefix + itoa(i) + b.suffix
					b.paths = append(b.paths, p)
					b.pathValues = append(b.pathValues, p)
				}
			}
			out[f.Type] = append(out[f.Type], b)
		}
	}
	return out
}
