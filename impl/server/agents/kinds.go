// Package agents is the domain of agent jobs and proposals (docs/agents.md). A job of a kind
// registered in code (Kinds) is created queued with a River job in the same transaction, worked
// by one process (running, heartbeats, events stored and announced with NOTIFY), and ends
// succeeded, failed (an error, a spent budget, a dead process) or cancelled. What a job suggests
// is a proposal: an immutable record of a change with its evidence and confidence, decided by a
// person (accept applies it, reject records the reason).
package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/sdods/sdods/impl/server/apierr"
)

// Kind is an agent kind: its name, what it does, the scopes a token needs to start it, the JSON
// Schema of its input, and its work.
type Kind struct {
	Name        string
	Description string
	Scopes      []string
	InputSchema map[string]any
	// Check validates the decoded input beyond its schema (nil: the schema only).
	Check func(in Input) error
	// Run does the job's work, reporting through j.
	Run func(ctx context.Context, j *Job) error
	// Enabled reports whether the kind can run now (nil: always).
	Enabled func(ctx context.Context) bool
}

// Input is a job's input as decoded from the request; the fields are those of every kind's
// schema (each kind reads its own).
type Input struct {
	RunID          string  `json:"runId,omitempty"`
	MinOccurrences int     `json:"minOccurrences,omitempty"`
	Steps          int     `json:"steps,omitempty"`
	SleepMs        int     `json:"sleepMs,omitempty"`
	Owner          string  `json:"owner,omitempty"`
	ExpiresInDays  int     `json:"expiresInDays,omitempty"`
	MinConfidence  float64 `json:"minConfidence,omitempty"`
}

// Registry is the kinds of a process.
type Registry struct{ kinds map[string]*Kind }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{kinds: map[string]*Kind{}} }

// Add registers k; a name registered twice panics (a wiring mistake).
func (r *Registry) Add(k *Kind) {
	if _, dup := r.kinds[k.Name]; dup {
		panic("agents: kind " + k.Name + " registered twice")
	}
	r.kinds[k.Name] = k
}

// Get returns the kind named name.
func (r *Registry) Get(name string) (*Kind, bool) {
	k, ok := r.kinds[name]
	return k, ok
}

// All returns the kinds sorted by name.
func (r *Registry) All() []*Kind {
	out := make([]*Kind, 0, len(r.kinds))
	for _, k := range r.kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// decodeInput checks raw against the kind: only the members its schema names, of their types.
func (k *Kind) decodeInput(raw json.RawMessage) (Input, error) {
	var in Input
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return in, apierr.New(apierr.ValidationFailed, "input is not an object", "input: send a JSON object per the kind's inputSchema (GET /api/agents/kinds)")
	}
	props, _ := k.InputSchema["properties"].(map[string]any)
	for name, v := range m {
		p, ok := props[name].(map[string]any)
		if !ok {
			return in, apierr.New(apierr.ValidationFailed, "input."+name+" is not an input of "+k.Name, "GET /api/agents/kinds lists the inputs of each kind")
		}
		if err := checkType(name, p, v); err != nil {
			return in, err
		}
	}
	if req, ok := k.InputSchema["required"].([]string); ok {
		for _, name := range req {
			if _, ok := m[name]; !ok {
				return in, apierr.New(apierr.ValidationFailed, "input."+name+" is required for "+k.Name, "GET /api/agents/kinds lists the inputs of each kind")
			}
		}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, apierr.Wrap(err, apierr.ValidationFailed, "input does not fit the kind's schema", "GET /api/agents/kinds lists the inputs of each kind")
	}
	if k.Check != nil {
		if err := k.Check(in); err != nil {
			return in, err
		}
	}
	return in, nil
}

func checkType(name string, p map[string]any, v any) error {
	bad := func(want string) error {
		return apierr.New(apierr.ValidationFailed, fmt.Sprintf("input.%s must be %s", name, want), "GET /api/agents/kinds lists the inputs of each kind")
	}
	switch p["type"] {
	case "string":
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if p["format"] == "uuid" && !isUUID(s) {
			return bad("a UUID")
		}
	case "integer", "number":
		f, ok := v.(float64)
		if !ok || (p["type"] == "integer" && f != float64(int64(f))) {
			return bad("a " + p["type"].(string))
		}
		if min, ok := p["minimum"].(int); ok && f < float64(min) {
			return bad(fmt.Sprintf("at least %d", min))
		}
		if max, ok := p["maximum"].(int); ok && f > float64(max) {
			return bad(fmt.Sprintf("at most %d", max))
		}
	}
	return nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
