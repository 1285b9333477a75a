// Package diag holds the one diagnostic type of the engine: a stable code, a JSON pointer into the
// document that caused it, and a message. Loads collect every diagnostic instead of stopping at the
// first; evaluation errors use the same type.
package diag

import (
	"sort"
	"strings"
)

// Diagnostic is one problem found while loading or evaluating. Code is one of the constants in
// codes.go; Pointer is an RFC 6901 JSON pointer relative to the document being compiled ("" is
// the whole document). An evaluation may return a diagnostic that other evaluations return too
// (see shared.go): a diagnostic returned by an evaluation must not be modified.
type Diagnostic struct {
	Code    string `json:"code"`
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Error returns "CODE at POINTER: message", or "CODE: message" when the pointer is empty.
func (d *Diagnostic) Error() string {
	if d.Pointer == "" {
		return d.Code + ": " + d.Message
	}
	return d.Code + " at " + d.Pointer + ": " + d.Message
}

// List is every diagnostic of one load, in document order.
type List []*Diagnostic

// Error joins the diagnostics one per line.
func (l List) Error() string {
	parts := make([]string, len(l))
	for i, d := range l {
		parts[i] = d.Error()
	}
	return strings.Join(parts, "\n")
}

// Sort orders the list by pointer (document order of siblings is kept for equal pointers) and
// removes exact duplicates, so a load reports a deterministic list.
func (l List) Sort() List {
	sort.SliceStable(l, func(i, j int) bool { return lessPointer(l[i].Pointer, l[j].Pointer) })
	out := l[:0]
	for i, d := range l {
		if i > 0 && *d == *l[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// lessPointer compares pointers token by token, numerically when both tokens are indexes.
func lessPointer(a, b string) bool {
	ta, tb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(ta) && i < len(tb); i++ {
		if ta[i] == tb[i] {
			continue
		}
		na, oka := index(ta[i])
		nb, okb := index(tb[i])
		if oka && okb {
			return na < nb
		}
		return ta[i] < tb[i]
	}
	return len(ta) < len(tb)
}

func index(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// Pointer appends one reference token to a JSON pointer, escaping "~" and "/" as RFC 6901 says.
func Pointer(base, token string) string {
	if strings.ContainsAny(token, "~/") {
		token = strings.ReplaceAll(token, "~", "~0")
		token = strings.ReplaceAll(token, "/", "~1")
	}
	return base + "/" + token
}

// Index appends a list index to a JSON pointer.
func Index(base string, i int) string {
	return base + "/" + itoa(i)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}
