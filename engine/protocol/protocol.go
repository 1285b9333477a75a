// Package protocol is the engine protocol (spec/v1/protocol.md): JSON Lines on standard input and
// output through which any engine is driven and certified. Each request line is answered by
// exactly one response line carrying the request's id; nothing else is written to the output.
// The package is standard library only so that every Go host can embed it.
package protocol

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/internal/jsonv"
)

// Protocol error codes, beside the engine's own codes (spec/v1/errors.md) which pass through.
const (
	CodeInvalid          = "PROTOCOL_INVALID"   // a line that is not a well-formed request
	CodeCommandUnknown   = "COMMAND_UNKNOWN"    // a cmd the engine does not know
	CodeRulesetNotLoaded = "RULESET_NOT_LOADED" // evaluate or manifest naming no loaded ruleset
	CodeChannel          = "CHANNEL_UNAVAILABLE"
	CodeInternal         = "INTERNAL"
)

// Version is the protocol version this package speaks.
const Version = 1

// MaxLine is the longest request line read (64 MiB); a longer line ends the session.
const MaxLine = 64 << 20

// Server answers protocol requests. It holds the rulesets loaded so far, by ruleset id. It is not
// safe for concurrent use: a session is one line after another.
type Server struct {
	name     string
	ops      map[string]engine.Operator
	rulesets map[string]*engine.RuleSet
}

// Option configures a Server.
type Option func(*Server)

// WithOperators registers the custom operators the host supplies (for the suite: engine/testops).
func WithOperators(ops map[string]engine.Operator) Option {
	return func(s *Server) {
		for k, v := range ops {
			s.ops[k] = v
		}
	}
}

// WithName sets the implementation name reported by version.
func WithName(name string) Option { return func(s *Server) { s.name = name } }

// New returns a server with no ruleset loaded.
func New(opts ...Option) *Server {
	s := &Server{name: "sdods-go", ops: map[string]engine.Operator{}, rulesets: map[string]*engine.RuleSet{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Serve reads request lines from r and writes one response line per request to w until r ends
// (nil), ctx is done, or reading or writing fails. Blank lines are ignored.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			out := s.Handle(line)
			if _, werr := bw.Write(append(out, '\n')); werr != nil {
				return werr
			}
			// Flush when no further request is already waiting, so a client that sends one
			// line and waits gets its answer at once, and a batch is written in few calls.
			if br.Buffered() == 0 {
				if werr := bw.Flush(); werr != nil {
					return werr
				}
			}
		}
		if err == io.EOF {
			return bw.Flush()
		}
		if err != nil {
			_ = bw.Flush()
			return err
		}
	}
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLine {
			return nil, fmt.Errorf("a request line is longer than %d bytes", MaxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// Failure is a refused request: a code, a message and, for loads, every diagnostic. Pointer is
// set for errors that name one place (evaluation errors, BAD_REQUEST).
type Failure struct {
	Code        string               `json:"code"`
	Message     string               `json:"message"`
	Pointer     *string              `json:"pointer,omitempty"`
	Diagnostics []*engine.Diagnostic `json:"diagnostics,omitempty"`
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

func invalid(format string, args ...any) *Failure {
	return &Failure{Code: CodeInvalid, Message: fmt.Sprintf(format, args...)}
}

// fromError turns an engine error into a Failure: a load keeps every diagnostic, an evaluation
// error its pointer.
func fromError(err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	var list engine.Diagnostics
	if errors.As(err, &list) && len(list) > 0 {
		p := list[0].Pointer
		return &Failure{Code: list[0].Code, Message: list.Error(), Pointer: &p, Diagnostics: list}
	}
	var d *engine.Diagnostic
	if errors.As(err, &d) {
		p := d.Pointer
		return &Failure{Code: d.Code, Message: d.Message, Pointer: &p}
	}
	return &Failure{Code: CodeInternal, Message: err.Error()}
}

// Handle answers one request line with one response line (without the line break). It never
// fails: a malformed line is answered with PROTOCOL_INVALID and id null.
func (s *Server) Handle(line []byte) (out []byte) {
	id := json.RawMessage("null")
	defer func() {
		if r := recover(); r != nil {
			out = response(id, nil, &Failure{Code: CodeInternal, Message: fmt.Sprint("panic: ", r)})
		}
	}()
	ms, err := members(line)
	if err == nil {
		// not UTF-8, or a lone surrogate escape anywhere in the line: not JSON (spec/v1/README.md)
		err = jsonv.CheckText(line)
	}
	if err != nil {
		return response(id, nil, invalid("the line is not a JSON object: %v", err))
	}
	req := map[string]json.RawMessage{}
	for _, m := range ms {
		if _, dup := req[m.key]; dup {
			if m.key == "id" {
				return response(id, nil, invalid("member id is given twice"))
			}
			if f := checkID(req["id"]); f == nil {
				id = req["id"]
			}
			return response(id, nil, invalid("member %s is given twice", m.key))
		}
		req[m.key] = m.raw
	}
	rawID, ok := req["id"]
	if !ok {
		return response(id, nil, invalid("member id is missing"))
	}
	if f := checkID(rawID); f != nil {
		return response(id, nil, f)
	}
	id = compact(rawID)
	var cmd string
	if raw, ok := req["cmd"]; !ok {
		return response(id, nil, invalid("member cmd is missing"))
	} else if json.Unmarshal(raw, &cmd) != nil || !isString(raw) {
		return response(id, nil, invalid("member cmd must be a string"))
	}
	delete(req, "id")
	delete(req, "cmd")
	var result any
	var f *Failure
	switch cmd {
	case "version":
		result, f = s.version(req)
	case "load":
		result, f = s.load(req)
	case "manifest":
		result, f = s.manifest(req)
	case "evaluate":
		result, f = s.evaluate(req)
	case "expression":
		result, f = s.expression(req)
	case "compile":
		result, f = s.compile(req)
	default:
		f = &Failure{Code: CodeCommandUnknown, Message: fmt.Sprintf("unknown command %q", cmd)}
	}
	return response(id, result, f)
}

func checkID(raw json.RawMessage) *Failure {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return invalid("member id must be a string or a number")
	}
	if t[0] == '"' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9') {
		return nil
	}
	return invalid("member id must be a string or a number")
}

func isString(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return json.RawMessage("null")
	}
	return b.Bytes()
}

// response writes {"id":…,"result":…} or {"id":…,"error":{…}} on one line.
func response(id json.RawMessage, result any, f *Failure) []byte {
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.Write(id)
	if f == nil {
		body, err := marshal(result)
		if err == nil {
			b.WriteString(`,"result":`)
			b.Write(body)
			b.WriteByte('}')
			return b.Bytes()
		}
		f = fromError(err)
	}
	body, err := json.Marshal(f)
	if err != nil {
		body = []byte(`{"code":"INTERNAL","message":"the error could not be written"}`)
	}
	b.WriteString(`,"error":`)
	b.Write(body)
	b.WriteByte('}')
	return b.Bytes()
}

// raw is JSON text already in its final form.
type raw []byte

func marshal(v any) ([]byte, error) {
	switch t := v.(type) {
	case raw:
		return compact(json.RawMessage(t)), nil
	case json.Marshaler:
		b, err := t.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return compact(b), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

type member struct {
	key string
	raw json.RawMessage
}

// members splits a JSON object into its members in document order, duplicates kept.
func members(line []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the object")
	}
	return out, nil
}

// spec lists the members a command accepts: required or optional, with their JSON kind.
type spec struct {
	name     string
	kind     string // object, array, string, any
	required bool
}

// check refuses unknown members, missing required members and members of the wrong kind, in code
// point order of member names, before the command does anything else.
func check(cmd string, req map[string]json.RawMessage, specs ...spec) *Failure {
	known := map[string]spec{}
	for _, s := range specs {
		known[s.name] = s
	}
	names := make([]string, 0, len(req))
	for k := range req {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if _, ok := known[k]; !ok {
			return invalid("%s: unknown member %q", cmd, k)
		}
	}
	for _, s := range specs {
		v, ok := req[s.name]
		if !ok {
			if s.required {
				return invalid("%s: member %s is missing", cmd, s.name)
			}
			continue
		}
		if !hasKind(v, s.kind) {
			return invalid("%s: member %s must be %s", cmd, s.name, article(s.kind))
		}
	}
	return nil
}

func article(kind string) string {
	switch kind {
	case "object", "array":
		return "an " + kind
	}
	return "a " + kind
}

func hasKind(v json.RawMessage, kind string) bool {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return false
	}
	switch kind {
	case "object":
		return t[0] == '{'
	case "array":
		return t[0] == '['
	case "string":
		return t[0] == '"'
	}
	return true
}

func str(v json.RawMessage) string {
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

func stringList(cmd, name string, v json.RawMessage) ([]string, *Failure) {
	if v == nil {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, invalid("%s: member %s must be an array of strings", cmd, name)
	}
	for _, s := range out {
		if s == "" {
			return nil, invalid("%s: member %s holds an empty name", cmd, name)
		}
	}
	return out, nil
}

func channelOK(cmd string, v json.RawMessage) *Failure {
	if v == nil {
		return nil
	}
	switch str(v) {
	case engine.ChannelServer, engine.ChannelClient:
		return nil
	}
	return invalid("%s: member channel must be \"server\" or \"client\"", cmd)
}

// versionResult is the answer to version.
type versionResult struct {
	Name      string   `json:"name"`
	Version   string   `json:"version"`
	Spec      string   `json:"spec"`
	Protocol  int      `json:"protocol"`
	Levels    []string `json:"levels"`
	Operators []string `json:"operators"`
}

func (s *Server) version(req map[string]json.RawMessage) (any, *Failure) {
	if f := check("version", req); f != nil {
		return nil, f
	}
	ops := make([]string, 0, len(s.ops))
	for k := range s.ops {
		ops = append(ops, k)
	}
	sort.Strings(ops)
	return versionResult{Name: s.name, Version: engine.Version, Spec: engine.SpecVersion, Protocol: Version,
		Levels: []string{"evaluator", "compiler"}, Operators: ops}, nil
}

// loadResult is the answer to load.
type loadResult struct {
	Ruleset           engine.RulesetRef `json:"ruleset"`
	Channels          []string          `json:"channels"`
	RequiredOperators []string          `json:"requiredOperators"`
	MissingOperators  []string          `json:"missingOperators"`
}

// hostOps returns the operators the host registers: all of them, or when given is set only
// those named (a case can so make a declared operator missing).
func (s *Server) hostOps(names []string, given bool) map[string]engine.Operator {
	if !given {
		return s.ops
	}
	out := map[string]engine.Operator{}
	for _, n := range names {
		if op := s.ops[n]; op != nil {
			out[n] = op
		}
	}
	return out
}

func (s *Server) load(req map[string]json.RawMessage) (any, *Failure) {
	if f := check("load", req, spec{"bundle", "object", false}, spec{"manifest", "object", false},
		spec{"channel", "string", false}, spec{"registered", "array", false}); f != nil {
		return nil, f
	}
	bundle, manifest := req["bundle"], req["manifest"]
	if (bundle == nil) == (manifest == nil) {
		return nil, invalid("load: exactly one of bundle and manifest is required")
	}
	if f := channelOK("load", req["channel"]); f != nil {
		return nil, f
	}
	names, f := stringList("load", "registered", req["registered"])
	if f != nil {
		return nil, f
	}
	opt := engine.WithOperators(s.hostOps(names, req["registered"] != nil))
	var rs *engine.RuleSet
	var err error
	if bundle != nil {
		rs, err = engine.FromBundle(bundle, opt)
	} else {
		rs, err = engine.FromManifest(manifest, opt)
	}
	if err != nil {
		return nil, fromError(err)
	}
	if ch := req["channel"]; ch != nil && !has(rs.Channels(), str(ch)) {
		// pointer "" (the whole ruleset), as manifest and evaluate answer it (protocol.md §3)
		whole := ""
		return nil, &Failure{Code: CodeChannel, Pointer: &whole, Message: fmt.Sprintf("channel %q is not available (the ruleset has %s)",
			str(ch), strings.Join(rs.Channels(), ", "))}
	}
	s.rulesets[rs.ID()] = rs
	return loadResult{Ruleset: rs.Ref(), Channels: nonNil(rs.Channels()), RequiredOperators: nonNil(rs.RequiredOperators()),
		MissingOperators: nonNil(rs.MissingOperators())}, nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) lookup(cmd string, v json.RawMessage) (*engine.RuleSet, *Failure) {
	rs := s.rulesets[str(v)]
	if rs == nil {
		return nil, &Failure{Code: CodeRulesetNotLoaded, Message: fmt.Sprintf("%s: no ruleset %q is loaded", cmd, str(v))}
	}
	return rs, nil
}

func (s *Server) manifest(req map[string]json.RawMessage) (any, *Failure) {
	if f := check("manifest", req, spec{"ruleset", "string", true}, spec{"channel", "string", true}); f != nil {
		return nil, f
	}
	if f := channelOK("manifest", req["channel"]); f != nil {
		return nil, f
	}
	rs, f := s.lookup("manifest", req["ruleset"])
	if f != nil {
		return nil, f
	}
	m, err := rs.Manifest(str(req["channel"]))
	if err != nil {
		return nil, fromError(err)
	}
	return raw(m), nil
}

func (s *Server) evaluate(req map[string]json.RawMessage) (any, *Failure) {
	if f := check("evaluate", req, spec{"ruleset", "string", true}, spec{"channel", "string", false},
		spec{"request", "object", true}); f != nil {
		return nil, f
	}
	if f := channelOK("evaluate", req["channel"]); f != nil {
		return nil, f
	}
	rs, f := s.lookup("evaluate", req["ruleset"])
	if f != nil {
		// a malformed request is reported before an unknown ruleset
		if _, err := engine.ParseRequest(req["request"]); err != nil {
			return nil, fromError(err)
		}
		return nil, f
	}
	channel := "" // Evaluate's
	if ch := req["channel"]; ch != nil {
		channel = str(ch)
	}
	res := &engine.Result{}
	if err := rs.EvaluateJSONInto(res, channel, req["request"]); err != nil {
		return nil, fromError(err)
	}
	return res, nil
}

func (s *Server) expression(req map[string]json.RawMessage) (any, *Failure) {
	if f := check("expression", req, spec{"expression", "any", true}, spec{"env", "object", false},
		spec{"functions", "object", false}, spec{"operators", "array", false}, spec{"registered", "array", false}); f != nil {
		return nil, f
	}
	declared, f := stringList("expression", "operators", req["operators"])
	if f != nil {
		return nil, f
	}
	registered, f := stringList("expression", "registered", req["registered"])
	if f != nil {
		return nil, f
	}
	if req["registered"] == nil {
		registered = declared
	}
	env := map[string]any{}
	if raw := req["env"]; raw != nil {
		var err error
		if env, err = engine.ParseEnv(raw); err != nil {
			return nil, fromError(err)
		}
	}
	opts := []engine.Option{engine.WithDeclaredOperators(declared...), engine.WithOperators(s.hostOps(registered, true))}
	if fns := req["functions"]; fns != nil {
		opts = append(opts, engine.WithFunctionsJSON("/functions", fns))
	}
	e, err := engine.CompileExpression(req["expression"], opts...)
	if err != nil {
		return nil, fromError(err)
	}
	v, err := e.EvaluatePrepared(env)
	if err != nil {
		return nil, fromError(err)
	}
	b, err := engine.MarshalValue(v)
	if err != nil {
		return nil, fromError(err)
	}
	return raw(append(append([]byte(`{"value":`), b...), '}')), nil
}

// compileResult is the answer to compile.
type compileResult struct {
	Ruleset engine.RulesetRef `json:"ruleset"`
	Bundle  json.RawMessage   `json:"bundle"`
}

func (s *Server) compile(req map[string]json.RawMessage) (any, *Failure) {
	if f := check("compile", req, spec{"source", "object", true}); f != nil {
		return nil, f
	}
	rs, err := engine.Compile(req["source"], engine.WithOperators(s.ops))
	if err != nil {
		return nil, fromError(err)
	}
	b, err := rs.Bundle()
	if err != nil {
		return nil, fromError(err)
	}
	return compileResult{Ruleset: rs.Ref(), Bundle: compact(b)}, nil
}
