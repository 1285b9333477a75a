package diag

import (
	"hash/maphash"
	"strconv"
	"sync/atomic"
)

// Rules that fail closed on a mistyped field fail the same way on every evaluation: the same
// operator, argument and pointer, and one of six JSON types; a rule that runs out of budget, at
// the same pointer and budget. The diagnostics such failures make
// are kept in a small table and shared by the evaluations that fail alike, so that a failing rule
// does not build its message each time. A diagnostic returned by an evaluation may therefore be
// returned by other evaluations too, concurrently: it must not be modified.
//
// The table is a cache of a function of its key (the diagnostic is made from the key alone), so
// what an evaluation returns does not depend on what is in it; two keys that land on one entry
// replace each other, which costs a new diagnostic as without the table.

type sharedKind uint8

const (
	kindType     sharedKind = iota // TypeMismatch: a is what was wanted, b the type found
	kindArgument                   // ArgumentInvalid: a is why
	kindBudget                     // Budget: n is the budget
)

type sharedKey struct {
	kind    sharedKind
	ptr, op string
	i       int
	a, b    string
	n       int64
}

// sharedEntry is a diagnostic and the key it was made from; it is never modified once stored.
type sharedEntry struct {
	key sharedKey
	d   Diagnostic
}

var (
	sharedTable [1024]atomic.Pointer[sharedEntry]
	sharedSeed  = maphash.MakeSeed()
)

// shared returns the diagnostic of k: the one in the table, or a new one, stored.
func shared(k sharedKey) *Diagnostic {
	h := maphash.String(sharedSeed, k.ptr) ^ maphash.String(sharedSeed, k.a)*0x9e3779b97f4a7c15
	h += uint64(k.i)<<32 + uint64(len(k.op))<<16 + uint64(len(k.b))<<8 + uint64(k.kind) + uint64(k.n)*0xff51afd7ed558ccd
	if k.b != "" {
		h += uint64(k.b[0]) << 40
	}
	slot := &sharedTable[(h^h>>29)%uint64(len(sharedTable))]
	if e := slot.Load(); e != nil && e.key == k {
		return &e.d
	}
	code := EvaluationError
	if k.kind == kindBudget {
		code = EvaluationLimit
	}
	e := &sharedEntry{key: k, d: Diagnostic{Code: code, Pointer: k.ptr, Message: k.message()}}
	slot.Store(e)
	return &e.d
}

func (k *sharedKey) message() string {
	if k.kind == kindBudget {
		return "evaluation exceeded its budget of " + strconv.FormatInt(k.n, 10) + " steps"
	}
	if k.kind == kindArgument {
		return k.op + ": argument " + strconv.Itoa(k.i+1) + ": " + k.a
	}
	return k.op + ": argument " + strconv.Itoa(k.i+1) + " must be " + k.a + ", got " + k.b
}
