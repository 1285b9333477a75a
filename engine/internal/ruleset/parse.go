package ruleset

import (
	"sort"
	"strings"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
)

// Mode says what kind of document is being read.
type Mode struct {
	// Code is the code of structural problems: RULESET_INVALID for sources, BUNDLE_INVALID for
	// manifests.
	Code string
	// Manifest reads a manifest body: no id or version members; Extra members are skipped.
	Manifest bool
	Extra    []string
}

// Source is the mode of a source ruleset document.
var Source = Mode{Code: diag.RulesetInvalid}

type parser struct {
	mode    Mode
	diags   diag.List
	bodyPtr string
}

func (p *parser) errf(ptr, format string, args ...any) {
	p.diags = append(p.diags, diag.Structure(p.mode.Code, ptr, format, args...))
}

func (p *parser) report(d *diag.Diagnostic) { p.diags = append(p.diags, d) }

var kindNames = [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}

// fields checks that n is an object with only the allowed members (none twice) and every required
// one; it returns the members by name. ordered members keep duplicates for the caller.
func (p *parser) fields(n *jsonv.Node, ptr, what string, allowed, required []string) map[string]*jsonv.Node {
	if n == nil || n.Kind != jsonv.Object {
		p.errf(ptr, "%s must be an object, got %s", what, kind(n))
		return nil
	}
	out := map[string]*jsonv.Node{}
	var extras map[string]bool
	for _, m := range n.Members {
		mp := diag.Pointer(ptr, m.Key)
		if !contains(allowed, m.Key) {
			if contains(p.mode.Extra, m.Key) && ptr == p.bodyPtr {
				// read by the caller (a manifest's header), but named once like any member
				if extras[m.Key] {
					p.errf(mp, "member %q appears more than once", m.Key)
				}
				if extras == nil {
					extras = map[string]bool{}
				}
				extras[m.Key] = true
				continue
			}
			p.errf(mp, "unknown member %q in %s (allowed: %s)", m.Key, what, strings.Join(allowed, ", "))
			continue
		}
		if _, dup := out[m.Key]; dup {
			p.errf(mp, "member %q appears more than once", m.Key)
			continue
		}
		out[m.Key] = m.Value
	}
	for _, r := range required {
		if _, ok := out[r]; !ok {
			p.errf(ptr, "%s lacks the required member %q", what, r)
		}
	}
	return out
}

func kind(n *jsonv.Node) string {
	if n == nil {
		return "nothing"
	}
	return kindNames[n.Kind]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// str returns the string at n, reporting anything else; empty strings are refused unless
// allowEmpty. max bounds the length in bytes (0: no bound).
func (p *parser) str(n *jsonv.Node, ptr, what string, max int) (string, bool) {
	if n == nil {
		return "", false
	}
	if n.Kind != jsonv.String {
		p.errf(ptr, "%s must be a string, got %s", what, kind(n))
		return "", false
	}
	if n.Text == "" {
		p.errf(ptr, "%s must not be empty", what)
		return "", false
	}
	if max > 0 && len(n.Text) > max {
		p.errf(ptr, "%s must be at most %d bytes", what, max)
		return "", false
	}
	return n.Text, true
}

func (p *parser) optStr(m map[string]*jsonv.Node, key, ptr, what string) string {
	s, _ := p.str(m[key], diag.Pointer(ptr, key), what, 0)
	return s
}

// ValidPath reports whether s is a field path: segments separated by '.', none empty.
func ValidPath(s string) bool {
	if s == "" {
		return false
	}
	for _, seg := range strings.Split(s, ".") {
		if seg == "" {
			return false
		}
	}
	return true
}

// ValidTag reports whether s looks like a BCP 47 language tag: letters, then '-'-separated
// subtags of 1 to 8 letters or digits.
func ValidTag(s string) bool {
	if s == "" || len(s) > 35 {
		return false
	}
	first := true
	n := 0 // length of the current subtag
	for j := 0; j <= len(s); j++ {
		if j == len(s) || s[j] == '-' {
			if n < 1 || n > 8 {
				return false
			}
			first, n = false, 0
			continue
		}
		c := s[j]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (first || c < '0' || c > '9') {
			return false
		}
		n++
	}
	return true
}

func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || (c != '_' && (c < '0' || c > '9'))) {
			return false
		}
	}
	return true
}

func validCode(s string) bool {
	if s == "" || len(s) > 128 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

var rulesetMembers = []string{"id", "version", "description", "defaultLocale", "types", "entities", "functions", "operators", "rules", "stateRules", "locales"}

// Parse reads a source document {"ruleset": {...}} (an optional "$schema" member is allowed
// beside it). It returns the model and every problem found; expressions are not compiled.
func Parse(doc *jsonv.Node) (*Ruleset, diag.List) {
	p := &parser{mode: Source}
	top := p.fields(doc, "", "the document", []string{DocumentKey, "$schema"}, []string{DocumentKey})
	if top == nil || top[DocumentKey] == nil {
		return nil, p.diags.Sort()
	}
	if s := top["$schema"]; s != nil && s.Kind != jsonv.String {
		p.errf("/$schema", "$schema must be a string")
	}
	rs := p.body(top[DocumentKey], "/"+DocumentKey)
	return rs, p.diags.Sort()
}

// ParseBody reads the members of a ruleset object (or of a manifest, per mode) at ptr.
func ParseBody(n *jsonv.Node, ptr string, mode Mode) (*Ruleset, diag.List) {
	p := &parser{mode: mode}
	rs := p.body(n, ptr)
	return rs, p.diags.Sort()
}

// bodyPtr is the pointer of the ruleset (or manifest) object, where Extra members are allowed.
func (p *parser) body(n *jsonv.Node, ptr string) *Ruleset {
	p.bodyPtr = ptr
	allowed, required := rulesetMembers, []string{"id", "version", "defaultLocale"}
	if p.mode.Manifest {
		allowed = rulesetMembers[2:]
		required = []string{"defaultLocale", "types", "entities", "functions", "operators", "rules", "stateRules", "locales"}
	}
	m := p.fields(n, ptr, "the ruleset", allowed, required)
	if m == nil {
		return nil
	}
	rs := &Ruleset{Ptr: ptr}
	if !p.mode.Manifest {
		rs.ID, _ = p.str(m["id"], ptr+"/id", "id", 256)
		rs.Version, _ = p.str(m["version"], ptr+"/version", "version", 64)
	}
	rs.Description = p.optStr(m, "description", ptr, "description")
	if loc, ok := p.str(m["defaultLocale"], ptr+"/defaultLocale", "defaultLocale", 35); ok {
		if !ValidTag(loc) {
			p.errf(ptr+"/defaultLocale", "defaultLocale %q is not a language tag", loc)
		}
		rs.DefaultLocale = loc
	}
	rs.Types = p.types(m["types"], ptr+"/types")
	rs.Entities = p.entities(m["entities"], ptr+"/entities")
	rs.Functions = p.functions(m["functions"], ptr+"/functions")
	rs.Operators = p.operators(m["operators"], ptr+"/operators")
	rs.Rules = p.rules(m["rules"], ptr+"/rules")
	rs.StateRules = p.stateRules(m["stateRules"], ptr+"/stateRules")
	rs.Locales = p.locales(m["locales"], ptr+"/locales")
	p.check(rs)
	return rs
}

// members returns the members of an optional object (absent: none).
func (p *parser) members(n *jsonv.Node, ptr, what string) []jsonv.Member {
	if n == nil {
		return nil
	}
	if n.Kind != jsonv.Object {
		p.errf(ptr, "%s must be an object, got %s", what, kind(n))
		return nil
	}
	return n.Members
}

func (p *parser) items(n *jsonv.Node, ptr, what string) []*jsonv.Node {
	if n == nil {
		return nil
	}
	if n.Kind != jsonv.Array {
		p.errf(ptr, "%s must be an array, got %s", what, kind(n))
		return nil
	}
	return n.Items
}

func (p *parser) types(n *jsonv.Node, ptr string) []*Type {
	var out []*Type
	seen := map[string]bool{}
	for _, m := range p.members(n, ptr, "types") {
		tp := diag.Pointer(ptr, m.Key)
		if !validName(m.Key) {
			p.errf(tp, "type name %q must be a letter followed by letters, digits or '_'", m.Key)
			continue
		}
		if seen[m.Key] {
			p.errf(tp, "type %q is declared more than once", m.Key)
			continue
		}
		seen[m.Key] = true
		f := p.fields(m.Value, tp, "a type", []string{"base", "description"}, nil)
		t := &Type{Name: m.Key, Ptr: tp, Base: "string"}
		if f != nil {
			if b, ok := p.str(f["base"], tp+"/base", "base", 0); ok {
				if !contains(Bases, b) {
					p.report(diag.UnknownBase(tp+"/base", b))
				}
				t.Base = b
			}
			t.Description = p.optStr(f, "description", tp, "description")
		}
		out = append(out, t)
	}
	return out
}

func (p *parser) entities(n *jsonv.Node, ptr string) []*Entity {
	var out []*Entity
	seen := map[string]bool{}
	for _, m := range p.members(n, ptr, "entities") {
		ep := diag.Pointer(ptr, m.Key)
		if !validName(m.Key) {
			p.errf(ep, "entity name %q must be a letter followed by letters, digits or '_'", m.Key)
			continue
		}
		if seen[m.Key] {
			p.errf(ep, "entity %q is declared more than once", m.Key)
			continue
		}
		seen[m.Key] = true
		f := p.fields(m.Value, ep, "an entity", []string{"path", "many", "description", "fieldTypes"}, []string{"fieldTypes"})
		if f == nil {
			continue
		}
		e := &Entity{Name: m.Key, Path: m.Key, Ptr: ep}
		if s, ok := p.str(f["path"], ep+"/path", "path", 0); ok {
			if !ValidPath(s) {
				p.errf(ep+"/path", "path %q must be segments separated by '.', none empty", s)
			}
			e.Path = s
		}
		if mv := f["many"]; mv != nil {
			if mv.Kind != jsonv.Bool {
				p.errf(ep+"/many", "many must be a boolean")
			}
			e.Many = mv.Bool
		}
		e.Description = p.optStr(f, "description", ep, "description")
		for _, fm := range p.members(f["fieldTypes"], ep+"/fieldTypes", "fieldTypes") {
			fp := diag.Pointer(ep+"/fieldTypes", fm.Key)
			if !ValidPath(fm.Key) {
				p.errf(fp, "field %q must be segments separated by '.', none empty", fm.Key)
				continue
			}
			tn, ok := p.str(fm.Value, fp, "a field type", 0)
			if !ok {
				continue
			}
			e.Fields = append(e.Fields, &FieldType{Field: fm.Key, Type: tn, Ptr: fp})
		}
		out = append(out, e)
	}
	return out
}

func (p *parser) functions(n *jsonv.Node, ptr string) []*Function {
	var out []*Function
	for _, m := range p.members(n, ptr, "functions") {
		fp := diag.Pointer(ptr, m.Key)
		f := &Function{Name: m.Key, Params: []string{}, Ptr: fp, Raw: m.Value}
		d := m.Value
		if d.Kind != jsonv.Object {
			// still defined, so that calls to it are not also FUNCTION_UNKNOWN (expressions.md §5)
			p.report(diag.BadFunction(fp, m.Key, "a definition is an object {params, body}"))
			f.Body, f.Malformed = &jsonv.Node{Kind: jsonv.Null}, true
			out = append(out, f)
			continue
		}
		seen := map[string]bool{}
		for _, mm := range d.Members {
			if seen[mm.Key] {
				// at the second occurrence (README "Members named twice"); the first one is read
				p.report(diag.BadFunction(diag.Pointer(fp, mm.Key), m.Key, "member "+mm.Key+" is named twice"))
				f.Malformed = true
				continue
			}
			seen[mm.Key] = true
			switch mm.Key {
			case "params":
				if mm.Value.Kind != jsonv.Array {
					p.report(diag.BadFunction(fp+"/params", m.Key, "params must be an array of names"))
					f.Malformed = true
					continue
				}
				for i, pn := range mm.Value.Items {
					if pn.Kind != jsonv.String {
						p.report(diag.BadFunction(diag.Index(fp+"/params", i), m.Key, "a parameter name must be a string"))
						f.Malformed = true
						continue
					}
					f.Params = append(f.Params, pn.Text)
					f.ParamAt = append(f.ParamAt, i)
				}
			case "body":
				f.Body = mm.Value
			case "description":
				if mm.Value.Kind != jsonv.String {
					p.errf(fp+"/description", "description must be a string")
				}
			default:
				p.report(diag.BadFunction(diag.Pointer(fp, mm.Key), m.Key, "unknown member "+mm.Key))
				f.Malformed = true
			}
		}
		if !seen["params"] {
			p.report(diag.BadFunction(fp, m.Key, "params is missing (write [] for none)"))
			f.Malformed = true
		}
		out = append(out, f)
	}
	return out
}

func (p *parser) operators(n *jsonv.Node, ptr string) []*Operator {
	var out []*Operator
	seen := map[string]bool{}
	for _, m := range p.members(n, ptr, "operators") {
		op := diag.Pointer(ptr, m.Key)
		if !strings.HasPrefix(m.Key, "x-") || len(m.Key) < 3 {
			p.errf(op, "custom operator %q must be named x-...", m.Key)
			continue
		}
		if seen[m.Key] {
			p.errf(op, "operator %q is declared more than once", m.Key)
			continue
		}
		seen[m.Key] = true
		f := p.fields(m.Value, op, "an operator declaration", []string{"description"}, nil)
		o := &Operator{Name: m.Key, Ptr: op}
		if f != nil {
			o.Description = p.optStr(f, "description", op, "description")
		}
		out = append(out, o)
	}
	return out
}

func (p *parser) channels(n *jsonv.Node, ptr string) []string {
	if n == nil {
		return []string{Server, Client}
	}
	var out []string
	for i, it := range p.items(n, ptr, "channels") {
		ip := diag.Index(ptr, i)
		s, ok := p.str(it, ip, "a channel", 0)
		if !ok {
			continue
		}
		if s != Server && s != Client {
			p.errf(ip, "channel %q is not server or client", s)
			continue
		}
		if contains(out, s) {
			p.errf(ip, "channel %q is listed twice", s)
			continue
		}
		out = append(out, s)
	}
	if n.Kind == jsonv.Array && len(n.Items) == 0 {
		p.errf(ptr, "channels must list at least one channel")
	}
	// server first, so the resolved form does not depend on the order written
	if len(out) == 2 && out[0] == Client {
		out[0], out[1] = Server, Client
	}
	return out
}

var locationLevels = []string{Page, Screen, Section, Component}

func (p *parser) target(n *jsonv.Node, ptr string, state bool) Target {
	var t Target
	allowed := []string{Page, Screen, Section, Component, "fields", "type"}
	if state {
		allowed = allowed[:4]
	}
	if n == nil {
		return t
	}
	f := p.fields(n, ptr, "a target", allowed, nil)
	if f == nil {
		return t
	}
	for _, l := range locationLevels {
		s, _ := p.str(f[l], ptr+"/"+l, l, 256)
		switch l {
		case Page:
			t.Page = s
		case Screen:
			t.Screen = s
		case Section:
			t.Section = s
		case Component:
			t.Component = s
		}
	}
	if fv := f["fields"]; fv != nil {
		for i, it := range p.items(fv, ptr+"/fields", "fields") {
			ip := diag.Index(ptr+"/fields", i)
			s, ok := p.str(it, ip, "a field", 0)
			if !ok {
				continue
			}
			if !ValidPath(s) {
				p.errf(ip, "field %q must be segments separated by '.', none empty", s)
				continue
			}
			if contains(t.Fields, s) {
				p.errf(ip, "field %q is listed twice", s)
				continue
			}
			t.Fields = append(t.Fields, s)
		}
		if fv.Kind == jsonv.Array && len(fv.Items) == 0 {
			p.errf(ptr+"/fields", "fields must list at least one field")
		}
	}
	t.Type, _ = p.str(f["type"], ptr+"/type", "type", 0)
	if t.Type != "" && f["fields"] != nil {
		p.errf(ptr, "a target names fields or a type, not both")
	}
	return t
}

// scope resolves the scope of a rule: the written level, or the narrowest location level the
// target names, or project.
func (p *parser) scope(n *jsonv.Node, ptr string, t Target) string {
	if n == nil {
		s := Project
		for _, l := range locationLevels {
			if t.Get(l) != "" {
				s = l
			}
		}
		return s
	}
	s, ok := p.str(n, ptr, "scope", 0)
	if !ok {
		return Project
	}
	if !contains(Levels, s) {
		p.report(diag.BadScope(ptr, s))
		return s
	}
	if contains(locationLevels, s) && t.Get(s) == "" {
		p.report(diag.ScopeNotInTarget(ptr, s))
	}
	return s
}

var ruleMembers = []string{"id", "description", "scope", "channels", "severity", "code", "target", "when", "message"}

func (p *parser) rules(n *jsonv.Node, ptr string) []*Rule {
	var out []*Rule
	for i, it := range p.items(n, ptr, "rules") {
		rp := diag.Index(ptr, i)
		f := p.fields(it, rp, "a rule", ruleMembers, []string{"id", "code", "when", "message"})
		if f == nil {
			continue
		}
		r := &Rule{Ptr: rp, Severity: "error"}
		r.ID, _ = p.str(f["id"], rp+"/id", "id", 256)
		r.Description = p.optStr(f, "description", rp, "description")
		if c, ok := p.str(f["code"], rp+"/code", "code", 0); ok {
			if !validCode(c) {
				p.errf(rp+"/code", "code %q must be upper-case letters, digits, '_' or '.', starting with a letter", c)
			} else if c == diag.RuleFailed {
				p.errf(rp+"/code", "code %s is reserved for rules that fail closed", c)
			}
			r.Code = c
		}
		if s, ok := p.str(f["severity"], rp+"/severity", "severity", 0); ok {
			if !contains(Severities, s) {
				p.errf(rp+"/severity", "severity %q is not error, warning or info", s)
			}
			r.Severity = s
		}
		r.Channels = p.channels(f["channels"], rp+"/channels")
		r.Target = p.target(f["target"], rp+"/target", false)
		r.Scope = p.scope(f["scope"], rp+"/scope", r.Target)
		r.When = f["when"]
		r.Key, r.KeyPtr, r.Params = p.message(f["message"], rp+"/message")
		out = append(out, r)
	}
	return out
}

func (p *parser) message(n *jsonv.Node, ptr string) (string, string, []Param) {
	if n == nil {
		return "", ptr, nil
	}
	if n.Kind == jsonv.String {
		k, _ := p.str(n, ptr, "message", 0)
		return k, ptr, nil
	}
	f := p.fields(n, ptr, "a message", []string{"key", "params"}, []string{"key"})
	if f == nil {
		return "", ptr, nil
	}
	key, _ := p.str(f["key"], ptr+"/key", "key", 0)
	var params []Param
	for _, m := range p.members(f["params"], ptr+"/params", "params") {
		pp := diag.Pointer(ptr+"/params", m.Key)
		if !validName(m.Key) {
			p.errf(pp, "parameter name %q must be a letter followed by letters, digits or '_'", m.Key)
			continue
		}
		dup := false
		for _, q := range params {
			dup = dup || q.Name == m.Key
		}
		if dup {
			p.errf(pp, "parameter %q appears more than once", m.Key)
			continue
		}
		params = append(params, Param{Name: m.Key, Expr: m.Value, Ptr: pp})
	}
	sort.Slice(params, func(i, j int) bool { return params[i].Name < params[j].Name })
	return key, ptr + "/key", params
}

func (p *parser) stateRules(n *jsonv.Node, ptr string) []*StateRule {
	var out []*StateRule
	for i, it := range p.items(n, ptr, "stateRules") {
		rp := diag.Index(ptr, i)
		f := p.fields(it, rp, "a state rule", []string{"id", "description", "scope", "channels", "target", "when", "effects"}, []string{"id", "effects"})
		if f == nil {
			continue
		}
		r := &StateRule{Ptr: rp}
		r.ID, _ = p.str(f["id"], rp+"/id", "id", 256)
		r.Description = p.optStr(f, "description", rp, "description")
		r.Channels = p.channels(f["channels"], rp+"/channels")
		r.Target = p.target(f["target"], rp+"/target", true)
		r.Scope = p.scope(f["scope"], rp+"/scope", r.Target)
		r.When = f["when"]
		if r.When == nil {
			r.When = &jsonv.Node{Kind: jsonv.Bool, Bool: true}
		}
		effects := p.items(f["effects"], rp+"/effects", "effects")
		if f["effects"] != nil && f["effects"].Kind == jsonv.Array && len(effects) == 0 {
			p.errf(rp+"/effects", "effects must list at least one effect")
		}
		for j, en := range effects {
			ep := diag.Index(rp+"/effects", j)
			ef := p.fields(en, ep, "an effect", append([]string{"field"}, StateProps...), []string{"field"})
			if ef == nil {
				continue
			}
			e := &Effect{Ptr: ep}
			if s, ok := p.str(ef["field"], ep+"/field", "field", 0); ok {
				if !ValidPath(s) {
					p.errf(ep+"/field", "field %q must be segments separated by '.', none empty", s)
				}
				e.Field = s
			}
			for _, prop := range StateProps {
				if x := ef[prop]; x != nil {
					e.Props = append(e.Props, Param{Name: prop, Expr: x, Ptr: ep + "/" + prop})
				}
			}
			if len(e.Props) == 0 {
				p.errf(ep, "an effect sets at least one of %s", strings.Join(StateProps, ", "))
			}
			r.Effects = append(r.Effects, e)
		}
		out = append(out, r)
	}
	return out
}

func (p *parser) locales(n *jsonv.Node, ptr string) []*Catalog {
	var out []*Catalog
	seen := map[string]bool{}
	for _, m := range p.members(n, ptr, "locales") {
		cp := diag.Pointer(ptr, m.Key)
		if !ValidTag(m.Key) {
			p.errf(cp, "locale %q is not a language tag", m.Key)
			continue
		}
		low := strings.ToLower(m.Key)
		if seen[low] {
			p.errf(cp, "locale %q is declared more than once", m.Key)
			continue
		}
		seen[low] = true
		c := &Catalog{Tag: m.Key, Ptr: cp}
		keys := map[string]bool{}
		for _, mm := range p.members(m.Value, cp, "a catalog") {
			mp := diag.Pointer(cp, mm.Key)
			if mm.Key == "" {
				p.errf(mp, "a message key must not be empty")
				continue
			}
			if keys[mm.Key] {
				p.errf(mp, "message %q appears more than once", mm.Key)
				continue
			}
			keys[mm.Key] = true
			if mm.Value.Kind != jsonv.String {
				p.errf(mp, "a message template must be a string, got %s", kind(mm.Value))
				continue
			}
			if off, why := CheckTemplate(mm.Value.Text); why != "" {
				p.errf(mp, "template: %s at offset %d", why, off)
				continue
			}
			c.Messages = append(c.Messages, &Message{Key: mm.Key, Template: mm.Value.Text, Ptr: mp})
		}
		out = append(out, c)
	}
	return out
}

// check runs the checks across members: unique ids, declared types, one binding per field,
// message keys in the default catalog.
func (p *parser) check(rs *Ruleset) {
	types := map[string]bool{}
	for _, t := range rs.Types {
		types[t.Name] = true
	}
	bound := map[string]string{} // data field (entity path + field, with [] for many) -> pointer
	for _, e := range rs.Entities {
		for _, f := range e.Fields {
			if !types[f.Type] {
				p.report(diag.UnknownType(f.Ptr, f.Type))
			}
			key := e.Path
			if e.Many {
				key += ".[]"
			}
			key += "." + f.Field
			if first, dup := bound[key]; dup {
				p.report(diag.Rebound(f.Ptr, key, first))
				continue
			}
			bound[key] = f.Ptr
		}
	}
	ids := map[string]bool{}
	checkID := func(id, ptr string) {
		if id == "" {
			return
		}
		if ids[id] {
			p.errf(ptr, "rule id %q is used more than once", id)
		}
		ids[id] = true
	}
	var def *Catalog
	for _, c := range rs.Locales {
		if strings.EqualFold(c.Tag, rs.DefaultLocale) {
			def = c
		}
	}
	if def == nil && rs.DefaultLocale != "" && len(rs.Rules) > 0 {
		p.errf(rs.Ptr+"/defaultLocale", "the default locale %q has no catalog in locales", rs.DefaultLocale)
	}
	for _, r := range rs.Rules {
		checkID(r.ID, r.Ptr+"/id")
		if r.Target.Type != "" && !types[r.Target.Type] {
			p.report(diag.UnknownType(r.Ptr+"/target/type", r.Target.Type))
		}
		if def != nil && r.Key != "" && def.Lookup(r.Key) == nil {
			p.errf(r.KeyPtr, "message %q is not in the catalog of the default locale %s", r.Key, def.Tag)
		}
	}
	for _, r := range rs.StateRules {
		checkID(r.ID, r.Ptr+"/id")
	}
}

// Lookup returns the message of key, or nil.
func (c *Catalog) Lookup(key string) *Message {
	for _, m := range c.Messages {
		if m.Key == key {
			return m
		}
	}
	return nil
}
