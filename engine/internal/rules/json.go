package rules

import (
	"errors"
	"sort"
	"strconv"
	"sync"

	"github.com/sdods/sdods/engine/internal/jcs"
	"github.com/sdods/sdods/engine/internal/num"
)

// AppendJSON writes a JSON value canonically: members sorted as RFC 8785 sorts them, numbers in
// the engine's canonical form, no white space.
func AppendJSON(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case float64:
		b, ok := num.AppendFormat(b, t)
		if !ok {
			return nil, errors.New("a number is beyond the range of a double")
		}
		return b, nil
	case string:
		return jcs.AppendString(b, t), nil
	case []any:
		b = append(b, '[')
		for i, x := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = AppendJSON(b, x); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return jcs.Less(keys[i], keys[j]) })
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jcs.AppendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = AppendJSON(b, t[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, errors.New("not a JSON value")
}

// JSON returns the result as canonical JSON (see AppendJSON): what AppendJSON writes for Value,
// written straight from the result.
func (r *Result) JSON() ([]byte, error) {
	bp := bufPool.Get().(*[]byte)
	b, err := r.AppendJSON((*bp)[:0])
	var out []byte
	if err == nil {
		out = append([]byte(nil), b...)
	}
	if cap(b) <= 1<<16 {
		*bp = b[:0]
		bufPool.Put(bp)
	}
	return out, err
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// AppendJSON appends the result as canonical JSON; members are written in RFC 8785 order:
// findings, ruleset, states; in a finding code, field, location, message, rule, severity; in a
// location component, page, screen, section.
func (r *Result) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"findings":[`...)
	for i := range r.Findings {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.Findings[i].appendJSON(b)
	}
	b = append(b, `],"ruleset":{"checksum":`...)
	b = jcs.AppendString(b, r.Ruleset.Checksum)
	b = append(b, `,"id":`...)
	b = jcs.AppendString(b, r.Ruleset.ID)
	b = append(b, `,"version":`...)
	b = jcs.AppendString(b, r.Ruleset.Version)
	b = append(b, `},"states":{`...)
	var err error
	states := canonicalStates(r.States)
	for i := range states {
		f := &states[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = jcs.AppendString(b, f.Field)
		b = append(b, ":{"...)
		for j, p := range f.Props {
			if j > 0 {
				b = append(b, ',')
			}
			b = jcs.AppendString(b, p.Name)
			b = append(b, ':')
			if b, err = AppendJSON(b, p.Value); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	return append(b, "}}"...), nil
}

// canonicalStates returns s when its fields and properties are in RFC 8785 order without
// repeats, as evaluations make them; otherwise (a result built by hand) an ordered copy.
func canonicalStates(s States) States {
	ordered := true
	for i := range s {
		if i > 0 && !jcs.Less(s[i-1].Field, s[i].Field) {
			ordered = false
		}
		for j := 1; j < len(s[i].Props); j++ {
			if !jcs.Less(s[i].Props[j-1].Name, s[i].Props[j].Name) {
				ordered = false
			}
		}
	}
	if ordered {
		return s
	}
	var changes []change
	for _, f := range s {
		for _, p := range f.Props {
			changes = append(changes, change{f.Field, p.Name, p.Value})
		}
	}
	out := buildStates(changes)
	// a field given without properties still appears, as an empty object
	for _, f := range s {
		if len(f.Props) == 0 {
			if _, found := out.find(f.Field); !found {
				out = append(out, FieldState{Field: f.Field})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return jcs.Less(out[i].Field, out[j].Field) })
	return out
}

func (f *Finding) appendJSON(b []byte) []byte {
	b = append(b, `{"code":`...)
	b = jcs.AppendString(b, f.Code)
	if f.Field != "" {
		b = append(b, `,"field":`...)
		b = jcs.AppendString(b, f.Field)
	}
	b = append(b, `,"location":{`...)
	l := &f.Location
	sep := false
	for _, m := range [...]struct{ k, v string }{{`"component":`, l.Component}, {`"page":`, l.Page},
		{`"screen":`, l.Screen}, {`"section":`, l.Section}} {
		if m.v == "" {
			continue
		}
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, m.k...)
		b = jcs.AppendString(b, m.v)
	}
	b = append(b, `},"message":`...)
	b = jcs.AppendString(b, f.Message)
	b = append(b, `,"rule":`...)
	b = jcs.AppendString(b, f.Rule)
	b = append(b, `,"severity":`...)
	b = jcs.AppendString(b, f.Severity)
	return append(b, '}')
}

// Value returns the result as a JSON value (maps and slices).
func (r *Result) Value() any {
	fs := make([]any, len(r.Findings))
	for i, f := range r.Findings {
		fs[i] = f.Value()
	}
	st := make(map[string]any, len(r.States))
	for _, f := range r.States {
		m := make(map[string]any, len(f.Props))
		for _, p := range f.Props {
			m[p.Name] = p.Value
		}
		st[f.Field] = m
	}
	return map[string]any{
		"ruleset":  map[string]any{"id": r.Ruleset.ID, "version": r.Ruleset.Version, "checksum": r.Ruleset.Checksum},
		"findings": fs,
		"states":   st,
	}
}

// Value returns the finding as a JSON object.
func (f *Finding) Value() map[string]any {
	l := map[string]any{}
	if f.Location.Page != "" {
		l["page"] = f.Location.Page
	}
	if f.Location.Screen != "" {
		l["screen"] = f.Location.Screen
	}
	if f.Location.Section != "" {
		l["section"] = f.Location.Section
	}
	if f.Location.Component != "" {
		l["component"] = f.Location.Component
	}
	m := map[string]any{"code": f.Code, "severity": f.Severity, "message": f.Message, "rule": f.Rule, "location": l}
	if f.Field != "" {
		m["field"] = f.Field
	}
	return m
}

// MarshalJSON writes the result as canonical JSON.
func (r Result) MarshalJSON() ([]byte, error) { return r.JSON() }
