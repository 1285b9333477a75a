package machine

import (
	"errors"
	"sync/atomic"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/syntax"
	"github.com/sdods/sdods/engine/pattern"
)

// DefaultIterName is the name the body of map, filter, some and all sees the element under when
// the operator is given no name.
const DefaultIterName = syntax.DefaultIterName

type iterKind int

const (
	iterMap iterKind = iota
	iterFilter
	iterSome
	iterAll
)

var iterNames = [...]string{"map", "filter", "some", "all"}

// iterate builds map, filter, some and all: (list, body) or (list, "name", body). The body is
// evaluated once per element with the element bound to the name, in a scope nested in the
// enclosing one.
//
//go:noinline
func iterate(kind iterKind) builder {
	return func(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
		list := c.compile(raw[0], ptr+"/args/0", sc, depth+1)
		bind, bodyAt, ok := syntax.IterBinding(raw)
		if !ok {
			unchecked(ptr, "iteration name refused")
		}
		inner, slot := sc.bind(bind)
		var lv *listVar
		if kind != iterMap { // sum runs map's body itself (see sumOfMap)
			if p := c.listOf(raw[0], sc); p != nil {
				lv = &listVar{list: p, nested: len(sc.loops) > 0}
				inner.lists[len(inner.lists)-1] = lv
			}
		}
		inner, lp := inner.enter()
		body := c.compile(raw[bodyAt], diag.Index(ptr+"/args", bodyAt), inner, depth+1)
		list = lp.after(list)
		// the body's element paths read the index of the element (see listVar)
		indexed := lv != nil && lv.indexed
		var count func(fr *frame) (int, bool, error)
		if kind == iterFilter {
			// filter's evaluation, counting what it would keep
			count = func(fr *frame) (int, bool, error) {
				lv, err := list.eval(fr)
				if err != nil {
					return 0, false, err
				}
				items, ok := lv.([]any)
				if !ok {
					if lv == nil {
						return 0, true, nil
					}
					return 0, false, typeErr(ptr, name, 0, "an array", lv)
				}
				if err := fr.rt.charge(ptr, len(items)); err != nil {
					return 0, false, err
				}
				n := 0
				for i, it := range items {
					fr.locals[slot] = it
					if indexed {
						fr.nums[slot] = float64(i)
					}
					v, err := body.eval(fr)
					if err != nil {
						return 0, false, err
					}
					t, ok := v.(bool)
					if !ok {
						if t, err = truth(ptr, iterNames[kind], bodyAt, v); err != nil {
							return 0, false, err
						}
					}
					if t {
						n++
					}
				}
				return n, false, nil
			}
		}
		var iter *iteration
		if kind == iterMap {
			iter = &iteration{list: list, body: body, slot: slot, ptr: ptr, name: name}
		}
		return &node{ptr: ptr, count: count, iter: iter, eval: func(fr *frame) (any, error) {
			lv, err := list.eval(fr)
			if err != nil {
				return nil, err
			}
			items, ok := lv.([]any)
			if !ok {
				if lv == nil {
					if kind == iterMap || kind == iterFilter {
						return nil, nil
					}
					return false, nil
				}
				return nil, typeErr(ptr, name, 0, "an array", lv)
			}
			if err := fr.rt.charge(ptr, len(items)); err != nil {
				return nil, err
			}
			var out []any
			if kind == iterMap {
				out = make([]any, 0, len(items))
			} else if kind == iterFilter {
				out = []any{}
			}
			for i, it := range items {
				fr.locals[slot] = it
				if indexed {
					fr.nums[slot] = float64(i)
				}
				v, err := body.eval(fr)
				if err != nil {
					return nil, err
				}
				if kind == iterMap {
					out = append(out, v)
					continue
				}
				t, ok := v.(bool)
				if !ok {
					if t, err = truth(ptr, iterNames[kind], bodyAt, v); err != nil {
						return nil, err
					}
				}
				switch kind {
				case iterFilter:
					if t {
						out = append(out, it)
					}
				case iterSome:
					if t {
						return true, nil
					}
				case iterAll:
					if !t {
						return false, nil
					}
				}
			}
			switch kind {
			case iterSome:
				return false, nil
			case iterAll:
				return true, nil
			}
			return out, nil
		}}
	}
}

// buildMatches builds matches(subject, pattern). A pattern written as a string literal is checked
// and compiled at load, by the analysis (syntax.Analysis.Pattern); any other one (even one that
// folds to a constant, such as a concat of literals) at evaluation, where a refusal is an
// evaluation error (spec/v1/operators.md).
func buildMatches(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	args := c.compileArgs(raw, ptr, sc, depth)
	subj, pat := args[0], args[1]
	var fixed *pattern.Pattern
	if src, ok := pat.value.(string); pat.constant && ok && raw[1].StringLiteral() {
		if fixed = c.unit.analysis.Pattern(src); fixed == nil {
			unchecked(ptr, "pattern refused")
		}
	}
	type cached struct {
		src string
		p   *pattern.Pattern
	}
	var last atomic.Pointer[cached]
	// the test, which the eval boxes: a match outweighs the call
	cond := func(fr *frame) (bool, error) {
		sv, err := subj.eval(fr)
		if err != nil {
			return false, err
		}
		p := fixed
		if p == nil {
			pv, err := pat.eval(fr)
			if err != nil {
				return false, err
			}
			if sv == nil || pv == nil {
				// a null decides before the other argument is checked (operators.md)
				return false, nil
			}
			src, _, err := str(ptr, "matches", 1, pv)
			if err != nil {
				return false, err
			}
			if cc := last.Load(); cc != nil && cc.src == src {
				p = cc.p
			} else {
				cp, perr := pattern.Compile(src)
				if perr != nil {
					off, msg := patternProblem(perr)
					return false, diag.DynamicPatternRefused(ptr, off, msg)
				}
				last.Store(&cached{src, cp})
				p = cp
			}
		}
		s, ok := sv.(string)
		if !ok {
			_, _, err := str(ptr, "matches", 0, sv)
			return false, err // null, or not a string
		}
		if err := fr.rt.charge(ptr, 1+len(s)/64); err != nil { // cost1 of a string
			return false, err
		}
		m, merr := p.Match(s)
		if merr != nil {
			return false, diag.Eval(ptr, "matches", merr.Error())
		}
		return m, nil
	}
	n := c.withCond(&node{ptr: ptr, eval: boxCond(cond)}, cond)
	if subj.constant && pat.constant {
		return fold(n)
	}
	return n
}

func patternProblem(err error) (int, string) {
	var pe *pattern.Error
	if errors.As(err, &pe) {
		return pe.Offset, pe.Message
	}
	return 0, err.Error()
}

// buildLiteral builds literal(value): the argument is taken as data, not as an expression (the
// parser read it: a syntax.Data node). It is the only way to write an object, and a way to write
// an array without evaluating its elements.
func buildLiteral(c *compiler, name, ptr string, raw []*syntax.Expr, sc *scope, depth int) *node {
	if raw[0].Kind != syntax.Data || len(raw[0].Errs) > 0 {
		unchecked(ptr, "literal data that does not parse")
	}
	return constNode(raw[0].Value, ptr)
}
