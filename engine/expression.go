package engine

import (
	"encoding/json"
	"sort"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/machine"
	"github.com/sdods/sdods/engine/internal/value"
)

// Version is the engine release line.
const Version = "1.0.0-alpha.2"

// SpecVersion is the version of the specification in spec/v1 the engine implements.
const SpecVersion = "1.0"

// Diagnostic is the engine's one error type: a stable code, a JSON pointer and a message.
// Evaluation errors are a *Diagnostic; load errors are Diagnostics. A *Diagnostic an evaluation
// returns may be shared with other evaluations that failed the same way: treat it as read-only.
type Diagnostic = diag.Diagnostic

// Diagnostics is every problem of one load, sorted by pointer.
type Diagnostics = diag.List

// Operator is a custom operator supplied by the host. It receives the evaluated arguments as JSON
// values (nil, bool, float64, string, []any, map[string]any), must not modify them, and returns a
// JSON value; an error (or a panic) fails the evaluation with OPERATOR_FAILED.
type Operator = machine.Operator

// Function is one function definition: {fn: Name, args: [...]} calls it with Params bound to
// the arguments. The body sees its parameters and the environment roots, nothing else.
type Function struct {
	Name   string          `json:"name"`
	Params []string        `json:"params"`
	Body   json.RawMessage `json:"body"`
}

// Limits of the expression language.
const (
	MaxExpressionDepth = machine.MaxDepth  // nesting of an expression or a function body
	MaxEnvDepth        = value.MaxEnvDepth // nesting of each environment root
	DefaultBudget      = machine.DefaultBudget
)

type config struct {
	functions []machine.FunctionDef
	diags     diag.List
	declared  []string
	ops       map[string]Operator
	budget    int64
}

// Option configures a Compiler.
type Option func(*config)

// WithFunctions defines functions; pointerBase is the pointer of the list that holds them, the
// i-th definition being at pointerBase/i. A name defined twice is FUNCTION_REDEFINED.
func WithFunctions(pointerBase string, fns ...Function) Option {
	return func(c *config) {
		for i, f := range fns {
			ptr := diag.Index(pointerBase, i)
			def := machine.FunctionDef{Name: f.Name, Params: f.Params, Pointer: ptr}
			if len(f.Body) > 0 {
				n, err := jsonv.Decode(f.Body)
				if err != nil {
					c.diags = append(c.diags, diag.MalformedJSON(ptr+"/body", err))
					continue
				}
				def.Body = n
			}
			c.functions = append(c.functions, def)
		}
	}
}

// WithFunctionsJSON defines functions written as a JSON object {"name": {"params": [...],
// "body": expr}} located at pointerBase. A name that appears twice is FUNCTION_REDEFINED; a
// definition that is not exactly {params, body} (params missing, a member named twice or
// unknown, ...) is FUNCTION_INVALID.
func WithFunctionsJSON(pointerBase string, raw json.RawMessage) Option {
	return func(c *config) {
		n, err := jsonv.Decode(raw)
		if err != nil {
			c.diags = append(c.diags, diag.MalformedJSON(pointerBase, err))
			return
		}
		c.functions = append(c.functions, functionDefs(n, pointerBase, &c.diags)...)
	}
}

func functionDefs(n *jsonv.Node, base string, ds *diag.List) []machine.FunctionDef {
	if n.Kind != jsonv.Object {
		*ds = append(*ds, diag.BadFunction(base, "", "functions must be an object of definitions"))
		return nil
	}
	var out []machine.FunctionDef
	for _, m := range n.Members {
		ptr := diag.Pointer(base, m.Key)
		def := machine.FunctionDef{Name: m.Key, Pointer: ptr, Params: []string{}}
		d := m.Value
		if d.Kind != jsonv.Object {
			// still defined, so that calls to it are not also FUNCTION_UNKNOWN (expressions.md §5)
			*ds = append(*ds, diag.BadFunction(ptr, m.Key, "a definition is an object {params, body}"))
			def.Body, def.Malformed = &jsonv.Node{Kind: jsonv.Null}, true
			out = append(out, def)
			continue
		}
		seen := map[string]bool{}
		for _, mm := range d.Members {
			if seen[mm.Key] {
				// at the second occurrence (README "Members named twice"); the first one is read
				*ds = append(*ds, diag.BadFunction(diag.Pointer(ptr, mm.Key), m.Key, "member "+mm.Key+" is named twice"))
				def.Malformed = true
				continue
			}
			seen[mm.Key] = true
			switch mm.Key {
			case "params":
				if mm.Value.Kind != jsonv.Array {
					*ds = append(*ds, diag.BadFunction(ptr+"/params", m.Key, "params must be an array of names"))
					def.Malformed = true
					continue
				}
				for i, p := range mm.Value.Items {
					if p.Kind != jsonv.String {
						*ds = append(*ds, diag.BadFunction(diag.Index(ptr+"/params", i), m.Key, "a parameter name must be a string"))
						def.Malformed = true
						continue
					}
					def.Params = append(def.Params, p.Text)
					def.ParamAt = append(def.ParamAt, i)
				}
			case "body":
				def.Body = mm.Value
			default:
				*ds = append(*ds, diag.BadFunction(diag.Pointer(ptr, mm.Key), m.Key, "unknown member "+mm.Key))
				def.Malformed = true
			}
		}
		if !seen["params"] {
			*ds = append(*ds, diag.BadFunction(ptr, m.Key, "params is missing (write [] for none)"))
			def.Malformed = true
		}
		out = append(out, def)
	}
	return out
}

// WithDeclaredOperators declares custom operators (names starting with "x-") that expressions
// may use; the host may or may not supply them.
func WithDeclaredOperators(names ...string) Option {
	return func(c *config) { c.declared = append(c.declared, names...) }
}

// WithOperators supplies custom operator implementations; supplying one also declares it.
func WithOperators(ops map[string]Operator) Option {
	return func(c *config) {
		if c.ops == nil {
			c.ops = map[string]Operator{}
		}
		for name, op := range ops {
			c.ops[name] = op
			c.declared = append(c.declared, name)
		}
	}
}

// WithBudget sets the work budget of one evaluation (list elements visited, function calls,
// elements built); exceeding it is EVALUATION_LIMIT. n <= 0 keeps DefaultBudget.
func WithBudget(n int64) Option {
	return func(c *config) { c.budget = n }
}

// Compiler compiles expressions against one set of functions and custom operators.
type Compiler struct {
	unit   *machine.Unit
	ops    map[string]Operator
	budget int64
}

// NewCompiler compiles the functions given in opts. It returns Diagnostics listing every problem
// (FUNCTION_REDEFINED, FUNCTION_RECURSIVE, FUNCTION_UNKNOWN, ... inside bodies).
func NewCompiler(opts ...Option) (c *Compiler, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, diag.List{diag.Panic("", r)}
		}
	}()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	unit, ds := machine.NewUnit(machine.Config{Operators: cfg.declared, Functions: cfg.functions})
	ds = append(cfg.diags, ds...)
	if len(ds) > 0 {
		return nil, ds.Sort()
	}
	return &Compiler{unit: unit, ops: cfg.ops, budget: cfg.budget}, nil
}

// Compile compiles one JSON expression located at pointer in its document. It returns
// Diagnostics listing every problem.
func (c *Compiler) Compile(raw json.RawMessage, pointer string) (*Expression, error) {
	n, err := jsonv.Decode(raw)
	if err != nil {
		return nil, diag.List{diag.MalformedJSON(pointer, err)}
	}
	return c.compile(n, pointer)
}

// CompileValue compiles an expression already decoded into Go values (as encoding/json decodes
// into any, with float64 or json.Number numbers). Object members are visited in name order.
func (c *Compiler) CompileValue(v any, pointer string) (*Expression, error) {
	n, err := jsonv.FromValue(v)
	if err != nil {
		return nil, diag.List{diag.MalformedJSON(pointer, err)}
	}
	return c.compile(n, pointer)
}

func (c *Compiler) compile(n *jsonv.Node, pointer string) (e *Expression, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, diag.List{diag.Panic(pointer, r)}
		}
	}()
	prog, ds := c.unit.Compile(n, pointer)
	if len(ds) > 0 {
		return nil, ds
	}
	return &Expression{prog: prog, ops: c.ops, budget: c.budget, ptr: pointer}, nil
}

// CompileExpression compiles one JSON expression with the given functions and operators. It
// returns Diagnostics listing every problem: when the functions have some, the expression is
// still checked, against stand-ins for them (errors.md: a load reports every diagnostic).
func CompileExpression(raw json.RawMessage, opts ...Option) (*Expression, error) {
	c, err := NewCompiler(opts...)
	if err == nil {
		return c.Compile(raw, "")
	}
	ds, ok := err.(diag.List)
	if !ok {
		return nil, err
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	stand := &Compiler{unit: machine.NewStandInUnit(machine.Config{Operators: cfg.declared, Functions: cfg.functions}), ops: cfg.ops}
	if _, err := stand.Compile(raw, ""); err != nil {
		if more, ok := err.(diag.List); ok {
			ds = append(ds, more...).Sort()
		}
	}
	return nil, ds
}

// Expression is a compiled expression; it is safe for concurrent use.
type Expression struct {
	prog   *machine.Program
	ops    map[string]Operator
	budget int64
	ptr    string
}

// CustomOperators returns the custom operators the expression uses, sorted.
func (e *Expression) CustomOperators() []string { return e.prog.CustomOperators() }

// MissingOperators returns the custom operators the expression uses that the host did not
// supply, sorted; evaluating a use of one fails with OPERATOR_UNAVAILABLE.
func (e *Expression) MissingOperators() []string {
	var out []string
	for _, name := range e.prog.CustomOperators() {
		if e.ops[name] == nil {
			out = append(out, name)
		}
	}
	return out
}

// Evaluate evaluates the expression against env, whose members are the roots variables name
// (data, original, actor, ctx, ...). env is checked first: a root nested more than 64 deep, a
// non-finite number or a value that is not JSON is BAD_REQUEST. The result is a JSON value
// whose numbers are canonical; it may share memory with env and with the expression's constants,
// so treat it as read-only. Any failure is a *Diagnostic.
func (e *Expression) Evaluate(env map[string]any) (result any, err error) {
	env, err = PrepareEnv(env)
	if err != nil {
		return nil, err
	}
	return e.evaluate(env)
}

// EvaluatePrepared evaluates against an environment already returned by PrepareEnv, skipping the
// checks; a rule layer that evaluates many expressions against one request uses it.
func (e *Expression) EvaluatePrepared(env map[string]any) (any, error) {
	return e.evaluate(env)
}

func (e *Expression) evaluate(env map[string]any) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, diag.Panic(e.ptr, r)
		}
	}()
	v, err := e.prog.Eval(env, e.ops, e.budget)
	if err != nil {
		return nil, err
	}
	out, ok := value.Canonical(v)
	if !ok {
		return nil, diag.ResultOutOfRange(e.ptr)
	}
	return out, nil
}

// PrepareEnv checks an environment and returns it as engine values: every root at most 64 deep
// (CheckDepth), then numbers converted to float64 (json.Number, integer types), refusing numbers
// beyond double range, NaN, infinities, invalid UTF-8 and non-JSON Go values. Refusals are
// BAD_REQUEST. env itself is not modified.
func PrepareEnv(env map[string]any) (map[string]any, error) {
	if d := value.CheckDepth(env); d != nil {
		return nil, d
	}
	var out map[string]any
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := env[k]
		nv, d := value.Normalize(v, diag.Pointer("", k))
		if d != nil {
			return nil, d
		}
		if out == nil {
			if sameValue(nv, v) {
				continue
			}
			out = make(map[string]any, len(env))
			for kk, vv := range env {
				out[kk] = vv
			}
		}
		out[k] = nv
	}
	if out == nil {
		return env, nil
	}
	return out, nil
}

// sameValue reports whether Normalize returned its input unchanged (compared by identity for
// containers, by value for scalars).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		return mapIdentity(x, y)
	}
	return a == b
}

func mapIdentity(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	// Normalize returns the very same map when it changes nothing; writing a probe would modify
	// host data, so compare by reflect-free identity: same length and the same backing entries.
	for k, v := range a {
		w, ok := b[k]
		if !ok || !sameValue(v, w) {
			return false
		}
	}
	return true
}

// CheckDepth refuses (BAD_REQUEST) an environment with a root nested more than 64 deep. Arrays and
// objects count one level each; scalars count none.
func CheckDepth(env map[string]any) error {
	if d := value.CheckDepth(env); d != nil {
		return d
	}
	return nil
}

// CoreOperators returns the names of the 45 core operators, sorted.
func CoreOperators() []string { return machine.CoreOperators() }
