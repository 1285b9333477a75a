package ruleset

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/sdods/sdods/engine/internal/jcs"
	"github.com/sdods/sdods/engine/internal/jsonv"
)

// Node builders for the resolved form. Member order does not matter: everything written from
// these trees goes through package jcs, which sorts members.

// Str returns a string node.
func Str(s string) *jsonv.Node { return &jsonv.Node{Kind: jsonv.String, Text: s} }

// Int returns a number node holding the integer i.
func Int(i int) *jsonv.Node { return &jsonv.Node{Kind: jsonv.Number, Text: itoa(i)} }

// Bool returns a boolean node.
func Bool(b bool) *jsonv.Node { return &jsonv.Node{Kind: jsonv.Bool, Bool: b} }

// Obj returns an object node of members given as name, value pairs.
func Obj(kv ...any) *jsonv.Node {
	n := &jsonv.Node{Kind: jsonv.Object, Members: []jsonv.Member{}}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Members = append(n.Members, jsonv.Member{Key: kv[i].(string), Value: kv[i+1].(*jsonv.Node)})
	}
	return n
}

// Set appends a member to an object node.
func Set(n *jsonv.Node, key string, v *jsonv.Node) {
	n.Members = append(n.Members, jsonv.Member{Key: key, Value: v})
}

// Strs returns an array node of strings.
func Strs(ss []string) *jsonv.Node {
	n := &jsonv.Node{Kind: jsonv.Array, Items: []*jsonv.Node{}}
	for _, s := range ss {
		n.Items = append(n.Items, Str(s))
	}
	return n
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}

func setDesc(n *jsonv.Node, d string) {
	if d != "" {
		Set(n, "description", Str(d))
	}
}

// Members returns the resolved members shared by the ruleset and its manifests: defaultLocale,
// description, types, entities, functions, operators, rules, stateRules and locales. With channel
// "" every rule is kept; otherwise only the rules of that channel.
func (rs *Ruleset) Members(channel string) []jsonv.Member {
	out := Obj()
	Set(out, "defaultLocale", Str(rs.DefaultLocale))
	setDesc(out, rs.Description)
	types := Obj()
	for _, t := range rs.Types {
		tn := Obj("base", Str(t.Base))
		setDesc(tn, t.Description)
		Set(types, t.Name, tn)
	}
	Set(out, "types", types)
	ents := Obj()
	for _, e := range rs.Entities {
		ft := Obj()
		for _, f := range e.Fields {
			Set(ft, f.Field, Str(f.Type))
		}
		en := Obj("path", Str(e.Path), "many", Bool(e.Many), "fieldTypes", ft)
		setDesc(en, e.Description)
		Set(ents, e.Name, en)
	}
	Set(out, "entities", ents)
	fns := Obj()
	for _, f := range rs.Functions {
		fn := Obj("params", Strs(f.Params), "body", f.Body)
		if d := f.Raw.Get("description"); d != nil {
			Set(fn, "description", d)
		}
		Set(fns, f.Name, fn)
	}
	Set(out, "functions", fns)
	ops := Obj()
	for _, o := range rs.Operators {
		on := Obj()
		setDesc(on, o.Description)
		Set(ops, o.Name, on)
	}
	Set(out, "operators", ops)
	rules := &jsonv.Node{Kind: jsonv.Array, Items: []*jsonv.Node{}}
	for _, r := range rs.Rules {
		if channel != "" && !HasChannel(r.Channels, channel) {
			continue
		}
		params := Obj()
		for _, p := range r.Params {
			Set(params, p.Name, p.Expr)
		}
		rn := Obj("id", Str(r.ID), "scope", Str(r.Scope), "channels", Strs(r.Channels),
			"severity", Str(r.Severity), "code", Str(r.Code), "target", target(r.Target),
			"when", r.When, "message", Obj("key", Str(r.Key), "params", params))
		setDesc(rn, r.Description)
		rules.Items = append(rules.Items, rn)
	}
	Set(out, "rules", rules)
	states := &jsonv.Node{Kind: jsonv.Array, Items: []*jsonv.Node{}}
	for _, r := range rs.StateRules {
		if channel != "" && !HasChannel(r.Channels, channel) {
			continue
		}
		effects := &jsonv.Node{Kind: jsonv.Array, Items: []*jsonv.Node{}}
		for _, e := range r.Effects {
			en := Obj("field", Str(e.Field))
			for _, p := range e.Props {
				Set(en, p.Name, p.Expr)
			}
			effects.Items = append(effects.Items, en)
		}
		sn := Obj("id", Str(r.ID), "scope", Str(r.Scope), "channels", Strs(r.Channels),
			"target", target(r.Target), "when", r.When, "effects", effects)
		setDesc(sn, r.Description)
		states.Items = append(states.Items, sn)
	}
	Set(out, "stateRules", states)
	locs := Obj()
	for _, c := range rs.Locales {
		cn := Obj()
		for _, m := range c.Messages {
			Set(cn, m.Key, Str(m.Template))
		}
		Set(locs, c.Tag, cn)
	}
	Set(out, "locales", locs)
	return out.Members
}

func target(t Target) *jsonv.Node {
	n := Obj()
	for _, l := range locationLevels {
		if v := t.Get(l); v != "" {
			Set(n, l, Str(v))
		}
	}
	if len(t.Fields) > 0 {
		Set(n, "fields", Strs(t.Fields))
	}
	if t.Type != "" {
		Set(n, "type", Str(t.Type))
	}
	return n
}

// Resolved returns the resolved ruleset document {"ruleset": {...}}: every member present and
// every default written out.
func (rs *Ruleset) Resolved() *jsonv.Node {
	body := Obj("id", Str(rs.ID), "version", Str(rs.Version))
	body.Members = append(body.Members, rs.Members("")...)
	return Obj(DocumentKey, body)
}

// Checksum returns "sha256:" and the hex SHA-256 of the RFC 8785 form of the resolved ruleset.
func (rs *Ruleset) Checksum() (string, error) {
	b, err := jcs.Canonical(rs.Resolved())
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// FieldTypes returns the manifest's flat binding map: "Entity.field" -> type name.
func (rs *Ruleset) FieldTypes() *jsonv.Node {
	n := Obj()
	for _, e := range rs.Entities {
		for _, f := range e.Fields {
			Set(n, e.Name+"."+f.Field, Str(f.Type))
		}
	}
	return n
}
