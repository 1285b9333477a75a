package engine

import (
	"unsafe"

	"github.com/sdods/sdods/engine/internal/bundle"
	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/machine"
	"github.com/sdods/sdods/engine/internal/rules"
	"github.com/sdods/sdods/engine/internal/ruleset"
)

// Channels of a compiled ruleset: the server manifest carries every rule meant for the server,
// the client manifest the rules meant for front ends.
const (
	ChannelServer = "server"
	ChannelClient = "client"
)

// BundleFormatVersion is the bundle and manifest format this engine writes and reads.
const BundleFormatVersion = bundle.FormatVersion

// RuleFailed is the reserved finding code of a rule that failed closed: its condition, a message
// parameter or a state effect could not be evaluated, or it needs a custom operator the host has
// not registered.
const RuleFailed = diag.RuleFailed

// Location names a place of the user interface: page, screen, section, component. Empty members
// name nothing.
type Location = rules.Location

// View narrows an evaluation to one place; it has the members of a Location.
type View = rules.Location

// Finding is one problem found by a rule: its stable code, severity (error, warning, info),
// message resolved from the catalogs, field path (empty for the whole record), rule id and
// location.
type Finding = rules.Finding

// Result is the outcome of an evaluation: the ruleset reference, the findings in their documented
// order and the states set by state rules, keyed by field path (nil when none applied; its JSON
// still has an empty object). MarshalJSON writes it canonically.
type Result = rules.Result

// States are the states set by state rules: one FieldState per field in the order of the field
// paths, each with its properties in order of name; Get reads one property, Map returns them as
// maps.
type States = rules.States

// FieldState is the state of one field: its properties.
type FieldState = rules.FieldState

// Property is one state property of a field and its value.
type Property = rules.Property

// RulesetRef identifies a compiled ruleset: id, version and checksum.
type RulesetRef = rules.Ref

// Request is an evaluation request. Data, Original, Actor and Ctx are JSON objects (as
// map[string]any) or nil; View narrows evaluation; Locale picks the messages. Ruleset, when set,
// must be the id of the ruleset evaluating it.
//
// A request built in Go is checked by every evaluation. A request ParseRequest returned was
// checked there and is not checked again while its fields hold what ParseRequest put in them
// (replacing a field, the View included, makes the next evaluation check it); the objects inside
// it must then be treated as read-only, as the evaluation does.
type Request struct {
	Ruleset  string
	Data     any
	Original any
	Actor    any
	Ctx      any
	View     *View
	Locale   string

	parsed *parsedRequest // set by ParseRequest
}

// parsedRequest is what ParseRequest checked: evaluating the request does not check it again
// while its fields still hold these roots, view and locale.
type parsedRequest struct {
	req  rules.Request
	view View // a copy: a host may change *Request.View
}

// checkedAs returns the checked request when req still holds what ParseRequest returned.
func (req *Request) checkedAs() *rules.Request {
	p := req.parsed
	if p == nil || !sameRoot(req.Data, p.req.Data) || !sameRoot(req.Original, p.req.Original) ||
		!sameRoot(req.Actor, p.req.Actor) || !sameRoot(req.Ctx, p.req.Ctx) || req.Locale != p.req.Locale {
		return nil
	}
	if (req.View == nil) != (p.req.View == nil) || req.View != nil && *req.View != p.view {
		return nil
	}
	return &p.req
}

// sameRoot reports whether a and b are both nil or the same object (the same map, not an equal
// one). A map value is one pointer to its storage, compared here as reflect.Value.UnsafePointer
// would compare it, without reflect's type checks (a quarter of the instructions EvaluateInto
// spent outside the rules, issue 20 item 11).
func sameRoot(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ma, ok := a.(map[string]any)
	mb, ok2 := b.(map[string]any)
	return ok && ok2 && *(*unsafe.Pointer)(unsafe.Pointer(&ma)) == *(*unsafe.Pointer)(unsafe.Pointer(&mb))
}

func newParsed(er *rules.Request, id string) *Request {
	p := &parsedRequest{req: *er}
	req := &Request{Ruleset: id, Data: er.Data, Original: er.Original, Actor: er.Actor, Ctx: er.Ctx,
		View: er.View, Locale: er.Locale, parsed: p}
	if er.View != nil {
		p.view = *er.View
		p.req.View = &p.view
	}
	return req
}

// RuleSet is a loaded ruleset: compiled from source, or read from a bundle or a manifest. It is
// safe for concurrent use.
type RuleSet struct {
	ref       RulesetRef
	bundle    *jsonv.Node            // nil when loaded from a manifest
	manifests map[string]*jsonv.Node // by channel
	programs  map[string]*rules.Program
	server    *rules.Program // programs[ChannelServer], without the map lookup per evaluation
	client    *rules.Program // programs[ChannelClient]
	channels  []string
	declared  []string
	ops       map[string]Operator
}

func ruleConfig(opts []Option) config {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

func hostOps(cfg config) map[string]machine.Operator {
	ops := make(map[string]machine.Operator, len(cfg.ops))
	for k, v := range cfg.ops {
		ops[k] = v
	}
	return ops
}

// Compile compiles a source ruleset document, {"ruleset": {...}} as JSON (spec/v1/ruleset.md).
// Options WithOperators and WithBudget apply; functions and operators come from the document, so
// WithFunctions, WithFunctionsJSON and WithDeclaredOperators are ignored. It returns Diagnostics
// listing every problem, sorted by pointer.
func Compile(doc []byte, opts ...Option) (rs *RuleSet, err error) {
	defer func() {
		if r := recover(); r != nil {
			rs, err = nil, diag.List{diag.Panic("", r)}
		}
	}()
	n, derr := jsonv.Decode(doc)
	if derr != nil {
		return nil, diag.List{diag.Structure(diag.RulesetInvalid, "", "malformed JSON: %v", derr)}
	}
	src, ds := ruleset.Parse(n)
	cfg := ruleConfig(opts)
	ops := hostOps(cfg)
	var prog *rules.Program
	if src != nil {
		var eds diag.List
		prog, eds = rules.Compile(src, rules.Ref{}, ops, cfg.budget)
		ds = append(ds, eds...)
	}
	if len(ds) > 0 {
		return nil, ds.Sort()
	}
	sum, cerr := src.Checksum()
	if cerr != nil {
		return nil, diag.List{diag.Structure(diag.RulesetInvalid, "", "%v", cerr)}
	}
	ref := RulesetRef{ID: src.ID, Version: src.Version, Checksum: sum}
	prog.Ref = ref
	bref := bundle.Ref{ID: ref.ID, Version: ref.Version, Checksum: ref.Checksum}
	out := &RuleSet{ref: ref, bundle: bundle.Bundle(src, bref), manifests: map[string]*jsonv.Node{},
		programs: map[string]*rules.Program{}, channels: bundle.Channels, declared: prog.Declared(), ops: cfg.ops}
	for _, ch := range bundle.Channels {
		out.manifests[ch] = bundle.Manifest(src, bref, ch)
		out.programs[ch] = prog.ForChannel(ch)
	}
	out.server, out.client = out.programs[ChannelServer], out.programs[ChannelClient]
	return out, nil
}

// FromBundle loads a compiled bundle. An unsupported formatVersion is BUNDLE_UNSUPPORTED; any
// other malformation BUNDLE_INVALID; problems in its expressions keep their own codes. It returns
// Diagnostics listing every problem.
func FromBundle(b []byte, opts ...Option) (rs *RuleSet, err error) {
	defer func() {
		if r := recover(); r != nil {
			rs, err = nil, diag.List{diag.Panic("", r)}
		}
	}()
	n, derr := jsonv.Decode(b)
	if derr != nil {
		return nil, diag.List{diag.Structure(diag.BundleInvalid, "", "malformed JSON: %v", derr)}
	}
	ref, loaded, ds := bundle.ReadBundle(n)
	if len(ds) > 0 {
		return nil, ds
	}
	out, ds := fromLoaded(loaded, ref, ruleConfig(opts))
	if len(ds) > 0 {
		return nil, ds
	}
	out.bundle = n
	for _, ch := range bundle.Channels {
		out.manifests[ch] = n.Get(ch)
	}
	return out, nil
}

// FromManifest loads one channel's manifest on its own, as a native front end receives it. The
// ruleset then has only that channel. Errors are as for FromBundle.
func FromManifest(b []byte, opts ...Option) (rs *RuleSet, err error) {
	defer func() {
		if r := recover(); r != nil {
			rs, err = nil, diag.List{diag.Panic("", r)}
		}
	}()
	n, derr := jsonv.Decode(b)
	if derr != nil {
		return nil, diag.List{diag.Structure(diag.BundleInvalid, "", "malformed JSON: %v", derr)}
	}
	l, ds := bundle.ReadManifest(n, "")
	if len(ds) > 0 {
		return nil, ds
	}
	out, ds := fromLoaded([]*bundle.Loaded{l}, l.Ref, ruleConfig(opts))
	if len(ds) > 0 {
		return nil, ds
	}
	out.manifests[l.Channel] = n
	return out, nil
}

func fromLoaded(loaded []*bundle.Loaded, bref bundle.Ref, cfg config) (*RuleSet, diag.List) {
	ref := RulesetRef{ID: bref.ID, Version: bref.Version, Checksum: bref.Checksum}
	out := &RuleSet{ref: ref, manifests: map[string]*jsonv.Node{}, programs: map[string]*rules.Program{}, ops: cfg.ops}
	ops := hostOps(cfg)
	var all diag.List
	for _, l := range loaded {
		prog, ds := rules.Compile(l.Rules, ref, ops, cfg.budget)
		if len(ds) > 0 {
			all = append(all, ds...)
			continue
		}
		out.programs[l.Channel] = prog
		out.declared = prog.Declared()
	}
	if len(all) > 0 {
		return nil, all.Sort()
	}
	for _, ch := range bundle.Channels {
		if out.programs[ch] != nil {
			out.channels = append(out.channels, ch)
		}
	}
	out.server, out.client = out.programs[ChannelServer], out.programs[ChannelClient]
	return out, nil
}

// Ref returns the ruleset's id, version and checksum.
func (rs *RuleSet) Ref() RulesetRef { return rs.ref }

// ID returns the ruleset id.
func (rs *RuleSet) ID() string { return rs.ref.ID }

// Version returns the ruleset version.
func (rs *RuleSet) Version() string { return rs.ref.Version }

// Checksum returns "sha256:" and the SHA-256 of the RFC 8785 form of the resolved ruleset.
func (rs *RuleSet) Checksum() string { return rs.ref.Checksum }

// Channels returns the channels the ruleset has, sorted: both for a compiled ruleset or a bundle,
// one for a manifest.
func (rs *RuleSet) Channels() []string { return append([]string(nil), rs.channels...) }

// Bundle returns the bundle: RFC 8785 member order and numbers, indented, byte-identical across
// compiles and machines. A ruleset loaded from a manifest has none (CHANNEL_UNAVAILABLE).
func (rs *RuleSet) Bundle() ([]byte, error) {
	if rs.bundle == nil {
		return nil, diag.NoChannel(ChannelServer+" and "+ChannelClient, rs.channels)
	}
	return bundle.Encode(rs.bundle)
}

// Manifest returns the manifest of one channel, or CHANNEL_UNAVAILABLE.
func (rs *RuleSet) Manifest(channel string) ([]byte, error) {
	m := rs.manifests[channel]
	if m == nil {
		return nil, diag.NoChannel(channel, rs.channels)
	}
	return bundle.Encode(m)
}

// RequiredOperators returns the custom operators the ruleset declares, sorted.
func (rs *RuleSet) RequiredOperators() []string { return append([]string(nil), rs.declared...) }

// MissingOperators returns the declared custom operators the host has not registered, sorted.
// Rules that need one of them fail closed (RULE_FAILED, reason OPERATOR_UNAVAILABLE).
func (rs *RuleSet) MissingOperators() []string {
	var out []string
	for _, name := range rs.declared {
		if rs.ops[name] == nil {
			out = append(out, name)
		}
	}
	return out
}

// Evaluate evaluates a request on the server channel (or on the only channel of a ruleset loaded
// from a manifest). The request is checked first and refused with a BAD_REQUEST *Diagnostic
// naming the problem; after that, evaluation does not fail: a rule that cannot be evaluated fails
// closed with a RULE_FAILED finding.
func (rs *RuleSet) Evaluate(req *Request) (*Result, error) {
	return rs.EvaluateChannel(rs.defaultChannel(), req)
}

// defaultChannel is the channel Evaluate uses: server, or the only channel of a ruleset loaded
// from a manifest.
func (rs *RuleSet) defaultChannel() string {
	if rs.programs[ChannelServer] == nil && len(rs.channels) == 1 {
		return rs.channels[0]
	}
	return ChannelServer
}

// EvaluateChannel evaluates a request with the rules of one channel; a channel the ruleset lacks
// is CHANNEL_UNAVAILABLE.
func (rs *RuleSet) EvaluateChannel(channel string, req *Request) (*Result, error) {
	res := &Result{}
	if err := rs.EvaluateInto(res, channel, req); err != nil {
		return nil, err
	}
	return res, nil
}

// EvaluateInto is EvaluateChannel writing the result into res, reusing the storage of its
// findings and states: a host that evaluates request after request with one Result (a server
// keeping Results in a sync.Pool) allocates almost nothing per evaluation. Everything res held
// before is overwritten, so nothing of a previous result may be kept; after an error res holds
// nothing usable. An empty channel is Evaluate's.
func (rs *RuleSet) EvaluateInto(res *Result, channel string, req *Request) (err error) {
	if channel == "" {
		channel = rs.defaultChannel()
	}
	var p *rules.Program
	switch channel {
	case ChannelServer:
		p = rs.server
	case ChannelClient:
		p = rs.client
	default:
		p = rs.programs[channel]
	}
	if p == nil {
		return diag.NoChannel(channel, rs.channels)
	}
	if req == nil {
		return diag.Request("", "the request is missing")
	}
	if req.Ruleset != "" && req.Ruleset != rs.ref.ID {
		return rules.Mismatch(req.Ruleset, rs.ref.ID)
	}
	er := req.checkedAs()
	if er == nil {
		var d *diag.Diagnostic
		er, d = rules.PrepareRequest(&rules.Request{Data: req.Data, Original: req.Original, Actor: req.Actor,
			Ctx: req.Ctx, View: req.View, Locale: req.Locale})
		if d != nil {
			return d
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = diag.Panic("", r)
		}
	}()
	p.EvaluateInto(er, res)
	return nil
}

// EvaluateJSON shape-checks and evaluates a request written as JSON (see ParseRequest) on the
// server channel.
func (rs *RuleSet) EvaluateJSON(raw []byte) (*Result, error) {
	res := &Result{}
	if err := rs.EvaluateJSONInto(res, "", raw); err != nil {
		return nil, err
	}
	return res, nil
}

// EvaluateJSONInto is ParseRequest followed by EvaluateInto, with the same results and errors,
// in less time: the request is decoded straight into what the channel's rules read of it (the
// paths under its roots, found at load), and the rest of the text is only checked. raw is read
// in place until the call returns and nothing of it is kept (the states' values in res and the
// arguments of custom operators are copies), so the caller may reuse its buffer afterwards.
func (rs *RuleSet) EvaluateJSONInto(res *Result, channel string, raw []byte) (err error) {
	var p *rules.Program
	switch channel {
	case "":
		p = rs.programs[rs.defaultChannel()]
	case ChannelServer:
		p = rs.server
	case ChannelClient:
		p = rs.client
	default:
		p = rs.programs[channel]
	}
	if p != nil {
		defer func() {
			if r := recover(); r != nil {
				err = diag.Panic("", r)
			}
		}()
		if handled, err := p.EvaluateJSONInto(raw, rs.ref.ID, res); handled {
			return err
		}
	}
	// the slow path names the problem
	req, err := ParseRequest(raw)
	if err != nil {
		return err
	}
	return rs.EvaluateInto(res, channel, req)
}

// ParseRequest shape-checks an evaluation request written as JSON, {data, original?, actor?,
// ctx?, view?, locale?, ruleset?}, and returns it with its roots decoded. Every problem is a
// BAD_REQUEST *Diagnostic naming it: malformed JSON, not an object, an unknown or repeated
// member, data missing, a root that is not an object or null or is nested more than 64 deep, a
// number beyond double range, a malformed view or locale (spec/v1/evaluation.md).
func ParseRequest(raw []byte) (*Request, error) {
	if er, id, ok := rules.QuickParseRequest(raw); ok {
		return newParsed(er, id), nil
	}
	// the slow path names the problem
	n, err := jsonv.Decode(raw)
	if err != nil {
		return nil, diag.Request("", "the request is not valid JSON: %v", err)
	}
	er, id, d := rules.ParseRequest(n)
	if d != nil {
		return nil, d
	}
	return newParsed(er, id), nil
}
