package eval

import (
	"errors"
	"sort"
	"strconv"

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
		s, ok := num.Format(t)
		if !ok {
			return nil, errors.New("a number is beyond the range of a double")
		}
		return append(b, s...), nil
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

// JSON returns the result as canonical JSON (see AppendJSON).
func (r *Result) JSON() ([]byte, error) {
	return AppendJSON(nil, r.Value())
}

// Value returns the result as a JSON value (maps and slices).
func (r *Result) Value() any {
	fs := make([]any, len(r.Findings))
	for i, f := range r.Findings {
		fs[i] = f.Value()
	}
	st := make(map[string]any, len(r.States))
	for k, v := range r.States {
		m := make(map[string]any, len(v))
		for kk, vv := range v {
			m[kk] = vv
		}
		st[k] = m
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
func (r *Result) MarshalJSON() ([]byte, error) { return r.JSON() }
