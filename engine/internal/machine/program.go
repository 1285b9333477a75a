// Package machine is the expression layer: it turns one expression (parsed by package syntax
// into a typed tree; Unit.Compile parses a jsonv tree first) into a tree of Go closures, once,
// and runs them on a Machine (frames, budget, memoized paths). The optimisation passes it applies
// while building the closures are named (Passes) and chosen by Config.Skip. Evaluation runs the closures and never looks at JSON again. Package rules
// builds rulesets on top of it. The diagnostics of a load come from the analysis (package
// syntax), all of them, before anything is compiled: the compiler builds closures from a checked
// tree only; evaluation stops at the first error.
package machine

import (
	"sync"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/value"
)

// Operator is a host-supplied custom operator. It receives the evaluated arguments as JSON values
// (nil, bool, float64, string, []any, map[string]any) and returns one; an error makes the
// evaluation fail (the rule fails closed). It must not keep or modify its arguments.
type Operator func(args []any) (any, error)

// Limits of a load and of an evaluation.
const (
	MaxDepth      = 128        // nesting of an expression or function body
	MaxCallDepth  = 32         // functions in the longest chain of nested calls
	DefaultBudget = 10_000_000 // work units of one evaluation
)

// evalFn evaluates one compiled node.
type evalFn func(fr *frame) (any, error)

// node is a compiled expression.
type node struct {
	eval     evalFn
	constant bool
	value    any // the value when constant
	ptr      string
	// read marks a plain variable read (a local, a root or a memoized path): it charges nothing,
	// cannot fail, and reads the same value while the frame's slots it reads are unchanged
	read bool
	// path, when not nil, is the memoized path the node reads (a read node), which a consumer
	// may read without the node's call
	path *Path
	str  strFn // when not nil, evaluates the node without boxing a string result
	// cond, when not nil, evaluates a node whose value is always a boolean without boxing it
	// (see cond.go)
	cond condFn
	num  numFn // when not nil, evaluates the node without boxing a number result
	// count, when not nil, evaluates a list-valued node (filter) for the length of its list
	// without building it, charging exactly what evaluating it would; null reports a null list.
	count func(fr *frame) (n int, null bool, err error)
	// chain, when not nil, is the node as a chain of one-value operators, which an operator
	// applied to it extends (see chain.go)
	chain *chain
	// iter, when not nil, is the node as map over a list, which sum evaluates without the list
	iter *iteration
}

// strFn evaluates a node whose value is usually a string: ok reports that the value is the
// string s, otherwise it is v. It is the node's eval without the interface conversion, so a
// consumer that wants a string (startsWith, endsWith) saves an allocation.
type strFn func(fr *frame) (s string, ok bool, v any, err error)

// frame is the state of one function activation (or of the top-level expression).
type frame struct {
	locals []any
	// nums[i] is the number in locals[i] when that is unboxedNumber: a number an inlined call
	// stores for its parameter unboxed (see inline). Only the frame of a program has them.
	nums []float64
	rt   *runtime
	own  [4]any // backing of locals when a function needs no more
}

// runtime is the state shared by one evaluation.
type runtime struct {
	// The variable roots: by global index (see Unit.NumGlobals), or by name from env when env is
	// not nil (Program.Eval reads only the roots an evaluation reaches, as a map lookup each).
	globals []any
	env     map[string]any
	steps   int64
	limit   int64
	custom  map[string]Operator
	frames  []*frame // function frames by call depth, reused: calls nest, so they end in order
	depth   int      // frames in use
	// memoized paths (see Path): memo[i] holds path i's value when its gen is gen; Begin moves
	// to the next generation
	memo []memoEntry
	gen  uint32
	// memoNum[i] is the number of memo entry i when its value is unboxedNumber (see remembered)
	memoNum []float64
	// generation of the run, for subexpressions remembered within a run: a program that has
	// any moves to the next one as it starts (see compiler.runShared)
	run      uint32
	memoHigh int   // memo[memoHigh:] holds nothing of this evaluation
	dirty    int   // frames[:dirty] may hold the arguments of calls that failed
	slab     []any // the unused rest of the block argument lists are cut from
	// codes: the machine's user reads only the codes of errors (see Machine.CodesOnly)
	codes bool

	// element paths kept (see Elem): by Elem id, where their values are in arena
	elems []elemSpan
	arena []any
}

// argSlab is the number of values in one block of argument lists.
const argSlab = 64

// argList returns a new list of n values for the arguments of a custom operator. Lists are cut
// from a block of argSlab values, so that a call allocates only once in a while. A part of a
// block is handed out once and never written again by the engine, and its capacity ends where
// it does, so a host that keeps its arguments, or appends to them, sees exactly what it would
// with a list of its own.
func (rt *runtime) argList(n int) []any {
	if n == 0 {
		return []any{}
	}
	if n > len(rt.slab) {
		if n > argSlab/4 {
			return make([]any, n)
		}
		rt.slab = make([]any, argSlab)
	}
	a := rt.slab[:n:n]
	rt.slab = rt.slab[n:]
	return a
}

// newFrame returns the frame of a function call with slots locals, all nil: the one of the
// next call depth, reused.
func (rt *runtime) newFrame(slots int) *frame {
	if rt.depth == len(rt.frames) {
		f := &frame{rt: rt}
		f.locals = f.own[:]
		rt.frames = append(rt.frames, f)
	}
	f := rt.frames[rt.depth]
	rt.depth++
	if len(f.locals) < slots {
		f.locals = make([]any, slots)
	}
	return f
}

// root returns variable root g, named name.
func (rt *runtime) root(g int, name string) any {
	if rt.env != nil {
		return rt.env[name]
	}
	if g < len(rt.globals) {
		return rt.globals[g]
	}
	return nil
}

// freeFrame ends the call of the innermost frame newFrame returned, which used slots locals;
// nothing keeps a frame after its call. A call that fails is not ended: the evaluation stops,
// and the next Run starts from depth 0.
func (rt *runtime) freeFrame(f *frame, slots int) {
	clear(f.locals[:slots])
	rt.depth--
}

// charge spends n work units; it fails once the budget is exhausted. It is small enough to be
// inlined into every node that charges.
func (rt *runtime) charge(ptr string, n int) error {
	rt.steps += int64(n)
	if rt.steps > rt.limit {
		return rt.exhausted(ptr)
	}
	return nil
}

// spend adds n work units to the work done and reports whether the budget still covers it: charge,
// with the error left to the caller,
//
//	if !fr.rt.spend(n) {
//		return nil, fr.rt.exhausted(ptr)
//	}
//
// which saves the hottest nodes the test of an error value.
func (rt *runtime) spend(n int) bool {
	rt.steps += int64(n)
	return rt.steps <= rt.limit
}

// exhausted is the error of a charge beyond the budget, out of line so that charging inlines.
//
//go:noinline
func (rt *runtime) exhausted(ptr string) error { return diag.Budget(ptr, rt.limit) }

// remaining returns the units left in the budget.
func (rt *runtime) remaining() int64 { return rt.limit - rt.steps }

// chargeWeight charges the tree size of v (see value.Weight).
func (rt *runtime) chargeWeight(ptr string, v any) error {
	return rt.chargeWeightPlus(ptr, v, 0)
}

// chargeWeightPlus charges the tree size of v and extra more units: the same outcome as
// charging v, then extra.
func (rt *runtime) chargeWeightPlus(ptr string, v any, extra int64) error {
	w := scalarWeight(v)
	if w == 0 {
		w = value.Weight(v, rt.remaining())
	}
	rt.steps += w + extra
	if rt.steps > rt.limit {
		return rt.exhausted(ptr)
	}
	return nil
}

// argCost is the work an operator does to read its arguments: one per argument, plus one per 64
// bytes of a string and one per element of an array or member of an object (read shallowly;
// deep reads are charged by weight).
func argCost(args ...any) int {
	n := len(args)
	for _, a := range args {
		switch t := a.(type) {
		case string:
			n += len(t) / 64
		case []any:
			n += len(t)
		case map[string]any:
			n += len(t)
		}
	}
	return n
}

// Program is one compiled expression.
type Program struct {
	root     *node
	cond     condFn // root.cond: the program is a condition Test runs
	slots    int
	custom   []string // custom operators the expression uses, sorted
	nglobals int      // 1 + the largest global index of the roots it reads, itself or through functions
}

// ConstantBool returns the value of a program that is the constant true or false. Running such
// a program returns that value and charges one unit, which no budget refuses (a budget is at
// least one unit), so a caller may take the value without running it.
func (p *Program) ConstantBool() (v, ok bool) {
	if p.root.constant {
		v, ok = p.root.value.(bool)
	}
	return v, ok
}

// CustomOperators returns the names of the custom operators the expression uses, sorted.
func (p *Program) CustomOperators() []string { return append([]string(nil), p.custom...) }

// Machine is the reusable state of evaluations: one goroutine at a time evaluates programs
// with it, one after the other, without allocating a runtime or a frame for each. Begin binds
// the variables, operators and budget, Run evaluates one program (each with a fresh budget), and
// End drops every reference to them. The zero value is ready to use.
type Machine struct {
	rt     runtime
	fr     frame
	locals [16]any     // backing of fr.locals unless a program needs more
	nums   [16]float64 // and of fr.nums
	// fr.locals[:used] may hold values of this evaluation. Every program writes a slot before it
	// reads it, so the locals are cleared once, by End, rather than after each Run.
	used int
}

var machinePool = sync.Pool{New: func() any { return new(Machine) }}

// Eval evaluates the program against an environment whose values are already normalized (see
// package value). Custom operators are looked up in ops; budget <= 0 means DefaultBudget. An
// error is a *diag.Diagnostic that other evaluations may return too: it must not be modified.
func (p *Program) Eval(env map[string]any, ops map[string]Operator, budget int64) (any, error) {
	m := machinePool.Get().(*Machine)
	m.begin(nil, env, ops, budget)
	v, err := m.Run(p)
	m.End()
	machinePool.Put(m)
	return v, err
}

// Begin binds the variable roots by global index (Config.Globals and Unit.NumGlobals; a root
// beyond the slice is null), whose values must be normalized, the custom operators and the
// budget of each Run (<= 0 means DefaultBudget).
func (m *Machine) Begin(globals []any, ops map[string]Operator, budget int64) {
	m.begin(globals, nil, ops, budget)
}

func (m *Machine) begin(globals []any, env map[string]any, ops map[string]Operator, budget int64) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	if m.fr.rt == nil {
		m.fr.rt = &m.rt
		m.fr.locals, m.fr.nums = m.locals[:], m.nums[:]
	}
	m.rt.limit, m.rt.custom = budget, ops
	m.rt.globals, m.rt.env = globals, env
	if m.rt.gen++; m.rt.gen == 0 {
		for i := range m.rt.memo {
			m.rt.memo[i].gen = 0
		}
		for i := range m.rt.elems {
			m.rt.elems[i].gen = 0
		}
		m.rt.gen = 1
	}
	m.rt.arena = m.rt.arena[:0] // End cleared it
	if m.rt.run == 0 {
		m.rt.run = 1 // stamps of a run are never 0, the stamp of an empty entry
	}
}

// CodesOnly tells the machine whether its user reads only the Code of the errors Run returns,
// as rule evaluation does (a rule fails closed with the code as its reason). Then an error
// whose message would be formatted at each failure (a custom operator's) may instead be a
// diagnostic made once for its site and shared, whose message leaves out the details. It stays
// set until changed; Program.Eval's machines never set it.
func (m *Machine) CodesOnly(on bool) { m.rt.codes = on }

// runExtended runs a program compiled after the caller sized its globals: the roots it adds
// are null.
func (m *Machine) runExtended(p *Program) (any, error) {
	g := m.rt.globals
	m.rt.globals = append(append(make([]any, 0, p.nglobals), g...), make([]any, p.nglobals-len(g))...)
	v, err := m.Run(p)
	m.rt.globals = g
	return v, err
}

// End drops the references Begin took. The numbers stored unboxed (frame.nums,
// runtime.memoNum) are not cleared: they are no references, and nothing reads them once the
// locals and the memo that mark them are.
func (m *Machine) End() {
	m.rt.custom, m.rt.globals, m.rt.env = nil, nil, nil
	if m.used > 0 {
		// nothing of this evaluation stays reachable from the locals
		clear(m.fr.locals[:m.used])
		m.used = 0
	}
	if m.rt.memoHigh > 0 {
		clear(m.rt.memo[:m.rt.memoHigh])
		m.rt.memoHigh = 0
		clear(m.rt.arena) // element values are kept only with the memo (see runtime.keep)
	}
	if m.rt.dirty > 0 {
		// a call that failed left its arguments in the frames up to the depth it failed at
		for _, f := range m.rt.frames[:m.rt.dirty] {
			clear(f.locals)
		}
		m.rt.dirty = 0
	}
}

// Run evaluates one program with what Begin bound. An error is a *diag.Diagnostic that other
// evaluations may return too: it must not be modified.
func (m *Machine) Run(p *Program) (any, error) {
	if m.rt.env == nil && len(m.rt.globals) < p.nglobals {
		return m.runExtended(p)
	}
	m.rt.steps, m.rt.depth = 0, 0
	if p.slots > m.used {
		m.useLocals(p.slots)
	}
	v, err := p.root.eval(&m.fr)
	if err != nil {
		if m.rt.depth > m.rt.dirty {
			m.rt.dirty = m.rt.depth // an error left frames in use
		}
		return nil, err
	}
	// the result is read once more on its way out: a condition's or another scalar's weight is
	// charged here without a call
	if _, ok := v.(bool); ok {
		if m.rt.steps++; m.rt.steps > m.rt.limit {
			return nil, m.rt.exhausted(p.root.ptr)
		}
		return v, nil
	}
	if w := scalarWeight(v); w > 0 {
		if !m.rt.spend(int(w)) {
			return nil, m.rt.exhausted(p.root.ptr)
		}
		return v, nil
	}
	if err := m.rt.chargeWeight(p.root.ptr, v); err != nil {
		return nil, err
	}
	return v, nil
}

// IsCondition reports whether the program's value is always a boolean that Test returns
// unboxed (the Conds pass).
func (p *Program) IsCondition() bool { return p.cond != nil }

// Test runs a program whose IsCondition is true, as Run does, and returns its boolean: Run would
// return the same boolean, or the same error.
func (m *Machine) Test(p *Program) (bool, error) {
	if len(m.rt.globals) < p.nglobals && m.rt.env == nil {
		v, err := m.runExtended(p)
		b, _ := v.(bool)
		return b, err
	}
	m.rt.steps, m.rt.depth = 0, 0
	if p.slots > m.used {
		m.useLocals(p.slots)
	}
	b, err := p.cond(&m.fr)
	if err != nil {
		if m.rt.depth > m.rt.dirty {
			m.rt.dirty = m.rt.depth // an error left frames in use
		}
		return false, err
	}
	// Run's charge of a boolean result
	if m.rt.steps++; m.rt.steps > m.rt.limit {
		return false, m.rt.exhausted(p.root.ptr)
	}
	return b, nil
}

// newRuns restarts the generations of runs when they wrap around: no memo entry may carry a
// stamp of an earlier run.
func (rt *runtime) newRuns() {
	for i := range rt.memo {
		rt.memo[i].gen = 0
	}
	rt.run = 1
}

// useLocals makes room for a program with slots locals.
func (m *Machine) useLocals(slots int) {
	if slots > len(m.fr.locals) {
		clear(m.fr.locals[:m.used])
		m.fr.locals, m.fr.nums = make([]any, slots), make([]float64, slots)
	}
	m.used = slots
}
