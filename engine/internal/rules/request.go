package rules

import (
	"math"
	"sort"
	"unicode/utf8"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/num"
	"github.com/sdods/sdods/engine/internal/ruleset"
	"github.com/sdods/sdods/engine/internal/value"
)

// RequestMembers are the members of an evaluation request, in the order they are checked (code
// point order of their names).
var RequestMembers = []string{"actor", "ctx", "data", "locale", "original", "ruleset", "view"}

// requestWords are the jsonv.Word of RequestMembers, all of at most eight bytes.
var requestWords = func() (w [7]uint64) {
	for i, m := range RequestMembers {
		if len(m) > 8 {
			panic("request member " + m + " longer than a word")
		}
		w[i] = jsonv.Word(m)
	}
	return w
}()

var viewMembers = []string{"component", "page", "screen", "section"}

// MaxView is the longest view member, in bytes.
const MaxView = 256

// ParseRequest shape-checks a request decoded as a JSON tree and returns it with its roots as
// engine values, or the first problem as BAD_REQUEST: not an object, a duplicate or unknown
// member, data missing, a root that is neither an object nor null or is nested more than 64 deep,
// a number beyond double range, a malformed view, locale or ruleset. Duplicates and unknown
// members are reported in document order first, then members are checked in code point order of
// their names.
func ParseRequest(n *jsonv.Node) (*Request, string, *diag.Diagnostic) {
	if n.Kind != jsonv.Object {
		return nil, "", diag.Request("", "the request must be a JSON object")
	}
	m := map[string]*jsonv.Node{}
	for _, mem := range n.Members {
		if !contains(RequestMembers, mem.Key) {
			return nil, "", diag.Request(diag.Pointer("", mem.Key), "unknown member %q (allowed: data, original, actor, ctx, view, locale, ruleset)", mem.Key)
		}
		if _, dup := m[mem.Key]; dup {
			return nil, "", diag.Request(diag.Pointer("", mem.Key), "member %q appears more than once", mem.Key)
		}
		m[mem.Key] = mem.Value
	}
	if m["data"] == nil {
		return nil, "", diag.Request("", "the request lacks the member \"data\" (an object or null)")
	}
	req := &Request{}
	var id string
	for _, k := range RequestMembers {
		v := m[k]
		if v == nil {
			continue
		}
		ptr := "/" + k
		switch k {
		case "actor", "ctx", "data", "original":
			if v.Kind != jsonv.Object && v.Kind != jsonv.Null {
				return nil, "", diag.Request(ptr, "%s must be a JSON object or null", k)
			}
			if depthOf(v, 0) > value.MaxEnvDepth {
				return nil, "", diag.EnvTooDeep(k, value.MaxEnvDepth)
			}
			gv, d := toValue(v, ptr)
			if d != nil {
				return nil, "", d
			}
			switch k {
			case "actor":
				req.Actor = gv
			case "ctx":
				req.Ctx = gv
			case "data":
				req.Data = gv
			case "original":
				req.Original = gv
			}
		case "locale":
			if v.Kind == jsonv.Null {
				continue
			}
			if v.Kind != jsonv.String || !ruleset.ValidTag(v.Text) {
				return nil, "", diag.Request(ptr, "locale must be a language tag such as fr-CA (at most 35 characters) or null")
			}
			req.Locale = v.Text
		case "ruleset":
			if v.Kind != jsonv.String || v.Text == "" || len(v.Text) > 256 {
				return nil, "", diag.Request(ptr, "ruleset must be a non-empty string of at most 256 bytes")
			}
			id = v.Text
		case "view":
			if v.Kind == jsonv.Null {
				continue
			}
			if v.Kind != jsonv.Object {
				return nil, "", diag.Request(ptr, "view must be an object {page, screen, section, component} or null")
			}
			view := &Location{}
			seen := map[string]bool{}
			for _, mem := range v.Members {
				mp := diag.Pointer(ptr, mem.Key)
				if !contains(viewMembers, mem.Key) {
					return nil, "", diag.Request(mp, "unknown view member %q (allowed: page, screen, section, component)", mem.Key)
				}
				if seen[mem.Key] {
					return nil, "", diag.Request(mp, "view member %q appears more than once", mem.Key)
				}
				seen[mem.Key] = true
				if mem.Value.Kind != jsonv.String || mem.Value.Text == "" || len(mem.Value.Text) > MaxView {
					return nil, "", diag.Request(mp, "view.%s must be a non-empty string of at most %d bytes", mem.Key, MaxView)
				}
				setView(view, mem.Key, mem.Value.Text)
			}
			req.View = view
		}
	}
	return req, id, nil
}

func setView(v *Location, k, s string) {
	switch k {
	case "page":
		v.Page = s
	case "screen":
		v.Screen = s
	case "section":
		v.Section = s
	case "component":
		v.Component = s
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// depthOf counts arrays and objects, stopping past the limit.
func depthOf(n *jsonv.Node, d int) int {
	if d > value.MaxEnvDepth {
		return d
	}
	best := d
	switch n.Kind {
	case jsonv.Array:
		best = d + 1
		for _, it := range n.Items {
			if e := depthOf(it, d+1); e > best {
				best = e
			}
		}
	case jsonv.Object:
		best = d + 1
		for _, m := range n.Members {
			if e := depthOf(m.Value, d+1); e > best {
				best = e
			}
		}
	}
	return best
}

func toValue(n *jsonv.Node, ptr string) (any, *diag.Diagnostic) {
	switch n.Kind {
	case jsonv.Null:
		return nil, nil
	case jsonv.Bool:
		return n.Bool, nil
	case jsonv.Number:
		f, ok := num.Parse(n.Text)
		if !ok {
			return nil, diag.Request(ptr, "number %s is beyond the range of a double", clip(n.Text))
		}
		return f, nil
	case jsonv.String:
		if !utf8.ValidString(n.Text) {
			return nil, diag.Request(ptr, "a string is not valid UTF-8")
		}
		return n.Text, nil
	case jsonv.Array:
		out := make([]any, len(n.Items))
		for i, it := range n.Items {
			v, d := toValue(it, diag.Index(ptr, i))
			if d != nil {
				return nil, d
			}
			out[i] = v
		}
		return out, nil
	}
	out := make(map[string]any, len(n.Members))
	for _, m := range n.Members {
		mp := diag.Pointer(ptr, m.Key)
		if _, dup := out[m.Key]; dup {
			return nil, diag.Request(mp, "member %q appears more than once", m.Key)
		}
		v, d := toValue(m.Value, mp)
		if d != nil {
			return nil, d
		}
		out[m.Key] = v
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// PrepareRequest checks a request built from Go values: each root nil or an object (after
// normalization), at most 64 deep, numbers within double range; view members at most 256 bytes;
// a valid locale. Roots are checked in code point order of their names.
func PrepareRequest(req *Request) (*Request, *diag.Diagnostic) {
	out := *req
	// in code point order of the names
	names := [...]string{"actor", "ctx", "data", "original"}
	roots := [...]*any{&out.Actor, &out.Ctx, &out.Data, &out.Original}
	for i, k := range names {
		p := roots[i]
		if *p == nil {
			continue
		}
		if m, ok := (*p).(map[string]any); ok && fastNormal(m, 1) {
			continue
		}
		if value.Depth(*p, value.MaxEnvDepth) > value.MaxEnvDepth {
			return nil, diag.EnvTooDeep(k, value.MaxEnvDepth)
		}
		v, d := value.Normalize(*p, "/"+k)
		if d != nil {
			return nil, d
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, diag.Request("/"+k, "%s must be a JSON object or null", k)
		}
		*p = v
	}
	if req.Locale != "" && !ruleset.ValidTag(req.Locale) {
		return nil, diag.Request("/locale", "locale must be a language tag such as fr-CA (at most 35 characters) or null")
	}
	if v := req.View; v != nil {
		for _, k := range viewMembers {
			var s string
			switch k {
			case "page":
				s = v.Page
			case "screen":
				s = v.Screen
			case "section":
				s = v.Section
			case "component":
				s = v.Component
			}
			if len(s) > MaxView {
				return nil, diag.Request("/view/"+k, "view.%s must be a non-empty string of at most %d bytes", k, MaxView)
			}
		}
	}
	return &out, nil
}

// fastNormal reports whether v is already an engine value nested at most 64 deep (depth counts
// the containers around v), without building pointers or sorting keys; only when it says no does
// the slow path run to find and name the problem deterministically.
func fastNormal(v any, depth int) bool {
	switch t := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(t)
	case float64:
		return t-t == 0 && (t != 0 || !math.Signbit(t))
	case []any:
		if depth > value.MaxEnvDepth {
			return false
		}
		for _, x := range t {
			if !fastNormal(x, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		if depth > value.MaxEnvDepth {
			return false
		}
		for _, x := range t {
			if !fastNormal(x, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// QuickParseRequest is ParseRequest straight from the JSON text in one pass, for requests that
// pass every check: ok is false for anything ParseRequest or the decoder would refuse, and then
// the caller runs the slow path (jsonv.Decode and ParseRequest), which
// names the problem. When ok, the request is what the slow path returns.
func QuickParseRequest(raw []byte) (req *Request, id string, ok bool) {
	sc := jsonv.NewScanner(raw)
	defer sc.Release()
	req = &Request{}
	var view Location
	root := func(int) (any, bool) {
		if sc.Null() {
			return nil, true
		}
		m, ok := sc.Object(value.MaxEnvDepth)
		return m, ok
	}
	if !quickRequest(sc, req, &id, &view, root) {
		return nil, "", false
	}
	if req.View != nil {
		v := view
		req.View = &v
	}
	return req, id, true
}

// quickRequest reads a request from sc into req, id and view (req.View then points to view),
// the roots by root (given their global index), saying no to anything ParseRequest would not
// accept unchanged.
func quickRequest(sc *jsonv.Scanner, req *Request, id *string, view *Location, root func(g int) (any, bool)) bool {
	if !(sc.Next('{') || sc.Consume('{')) {
		return false
	}
	var seen uint
	if !(sc.Next('}') || sc.Space() && sc.Consume('}')) {
		for {
			k, w, ok := sc.Name()
			if !ok {
				return false
			}
			bit, member := uint(0), ""
			for i, m := range RequestMembers {
				// (the names are at most eight bytes: length and word settle them)
				if len(m) == len(k) && requestWords[i] == w {
					bit, member = 1<<i, m
					break
				}
			}
			if bit == 0 || seen&bit != 0 {
				return false
			}
			seen |= bit
			if !quickMember(sc, req, member, id, view, root) {
				return false
			}
			more, ok := sc.After('}')
			if more {
				continue
			}
			if ok {
				break
			}
			return false
		}
	}
	return sc.End() && seen&(1<<2) != 0 // data is required
}

func quickMember(sc *jsonv.Scanner, req *Request, k string, id *string, view *Location, root func(g int) (any, bool)) bool {
	switch k {
	case "actor", "ctx", "data", "original":
		var g int
		switch k {
		case "actor":
			g = gActor
		case "ctx":
			g = gCtx
		case "data":
			g = gData
		case "original":
			g = gOriginal
		}
		v, ok := root(g)
		if !ok {
			return false
		}
		switch g {
		case gActor:
			req.Actor = v
		case gCtx:
			req.Ctx = v
		case gData:
			req.Data = v
		case gOriginal:
			req.Original = v
		}
	case "locale":
		if sc.Null() {
			return true
		}
		s, ok := sc.String()
		if !ok || !ruleset.ValidTag(s) {
			return false
		}
		req.Locale = sc.Keep(s)
	case "ruleset":
		s, ok := sc.String()
		if !ok || s == "" || len(s) > 256 {
			return false
		}
		*id = sc.Keep(s)
	case "view":
		if sc.Null() {
			return true
		}
		if !(sc.Next('{') || sc.Consume('{')) {
			return false
		}
		*view = Location{}
		if !(sc.Next('}') || sc.Space() && sc.Consume('}')) {
			var seen uint
			for {
				vk, ok := sc.String()
				if !ok || !(sc.Next(':') || sc.Consume(':')) {
					return false
				}
				bit := uint(0)
				for i, m := range viewMembers {
					if m == vk {
						bit = 1 << i
						break
					}
				}
				if bit == 0 || seen&bit != 0 {
					return false
				}
				seen |= bit
				s, ok := sc.String()
				if !ok || s == "" || len(s) > MaxView {
					return false
				}
				setView(view, vk, sc.Keep(s))
				more, ok := sc.After('}')
				if more {
					continue
				}
				if ok {
					break
				}
				return false
			}
		}
		req.View = view
	}
	return true
}

// Mismatch is the diagnostic of a request naming ruleset got evaluated by ruleset want.
func Mismatch(got, want string) *diag.Diagnostic {
	return diag.Request("/ruleset", "the request names ruleset %q, this ruleset is %q", got, want)
}

// ParseEnv checks an environment given as JSON text (the engine protocol's env) and returns its
// roots as engine values, or the first problem as BAD_REQUEST, in this order: text that is not
// JSON (malformed, not UTF-8, a lone surrogate escape: pointer ""); not an object; a root named
// twice (its pointer); the first root in code point order nested more than 64 deep; then each
// root in code point order, checked as a request's roots are (a number beyond double range, a
// member named twice inside it: the pointer of the first, in document order).
func ParseEnv(raw []byte) (map[string]any, *diag.Diagnostic) {
	n, err := jsonv.Decode(raw)
	if err != nil {
		return nil, diag.Request("", "the environment is not JSON: %v", err)
	}
	if n.Kind != jsonv.Object {
		return nil, diag.Request("", "the environment must be a JSON object")
	}
	roots := make(map[string]*jsonv.Node, len(n.Members))
	names := make([]string, 0, len(n.Members))
	for _, m := range n.Members {
		if _, dup := roots[m.Key]; dup {
			return nil, diag.Request(diag.Pointer("", m.Key), "member %q appears more than once", m.Key)
		}
		roots[m.Key] = m.Value
		names = append(names, m.Key)
	}
	sort.Strings(names) // code point order: UTF-8 byte order
	for _, k := range names {
		if depthOf(roots[k], 0) > value.MaxEnvDepth {
			return nil, diag.EnvTooDeep(k, value.MaxEnvDepth)
		}
	}
	env := make(map[string]any, len(names))
	for _, k := range names {
		v, d := toValue(roots[k], diag.Pointer("", k))
		if d != nil {
			return nil, d
		}
		env[k] = v
	}
	return env, nil
}
