// Package ruleserver is the stateless rule server: it loads a directory of rulesets (YAML or JSON
// sources and precompiled *.bundle.json files), serves their bundles and manifests, evaluates
// requests against them, reloads them safely (compiled to the side, swapped atomically, a broken
// set refused while the previous one keeps serving) and drains gracefully on shutdown. Its HTTP
// API is openapi/rules.yaml, through the generated strict server of gen/rulesapi.
package ruleserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/gen/rulesapi"
)

var _ rulesapi.StrictServerInterface = (*Server)(nil)

// reloadStatus is the outcome of the last reload attempt.
type reloadStatus struct {
	at       time.Time
	ok       bool
	problems []rulesapi.LoadProblem
}

// Server answers the operations of openapi/rules.yaml from the rules currently published.
type Server struct {
	dir  string
	opts []engine.Option
	log  *slog.Logger

	rules    atomic.Pointer[ruleSet]
	last     atomic.Pointer[reloadStatus]
	draining atomic.Bool

	reloadMu sync.Mutex // one reload at a time
	sig      string     // signature of the directory at the last reload attempt (under reloadMu)
}

// NewServer returns a server of the rulesets in dir; nothing is loaded until Reload. ops are the
// custom operators the host registers; every other operator a ruleset declares is reported
// missing and the rules using it fail closed.
func NewServer(dir string, ops map[string]engine.Operator, log *slog.Logger) *Server {
	s := &Server{dir: dir, log: log}
	if len(ops) > 0 {
		s.opts = append(s.opts, engine.WithOperators(ops))
	}
	return s
}

// Reload reads and compiles every ruleset of the directory to the side and publishes them in one
// atomic swap. When any file has a problem nothing is published: the problems are logged and
// shown in readiness, and the previous rules keep serving. It reports whether it published.
func (s *Server) Reload(ctx context.Context) bool {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	s.sig = dirSignature(s.dir)
	rs, problems, warnings := loadDir(s.dir, s.opts)
	for _, w := range warnings {
		s.log.WarnContext(ctx, "ruleset not portable", "detail", w)
	}
	st := &reloadStatus{at: time.Now().UTC(), ok: rs != nil, problems: problems}
	if rs == nil {
		for _, p := range problems {
			ptr := ""
			if p.Pointer != nil {
				ptr = *p.Pointer
			}
			s.log.ErrorContext(ctx, "ruleset refused", "file", p.File, "code", p.Code, "pointer", ptr, "message", p.Message)
		}
		serving := "nothing"
		if cur := s.rules.Load(); cur != nil {
			serving = strings.Join(ids(cur), ",")
		}
		s.log.ErrorContext(ctx, "reload refused; the previous rules keep serving", "dir", s.dir, "problems", len(problems), "serving", serving)
		s.last.Store(st)
		return false
	}
	st.problems = []rulesapi.LoadProblem{}
	s.rules.Store(rs)
	s.last.Store(st)
	s.log.InfoContext(ctx, "rules loaded", "dir", s.dir, "rulesets", strings.Join(ids(rs), ","), "missing_operators", strings.Join(rs.missing, ","))
	return true
}

func ids(rs *ruleSet) []string {
	out := make([]string, len(rs.infos))
	for i, in := range rs.infos {
		out[i] = in.Id + "@" + in.Version
	}
	return out
}

// ReloadIfChanged reloads when the directory's files (names, sizes, modification times) differ
// from those of the last attempt. A refused set is not retried until a file changes again.
func (s *Server) ReloadIfChanged(ctx context.Context) bool {
	s.reloadMu.Lock()
	changed := dirSignature(s.dir) != s.sig
	s.reloadMu.Unlock()
	if !changed {
		return false
	}
	return s.Reload(ctx)
}

// Watch polls the directory every interval until ctx ends (standard library only: no inotify,
// which also works on network and ConfigMap volumes).
func (s *Server) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.ReloadIfChanged(ctx)
		}
	}
}

// Drain turns readiness off: /readyz answers 503 "draining" from now on.
func (s *Server) Drain() { s.draining.Store(true) }

// Ready reports whether the server has rules and is not draining.
func (s *Server) Ready() bool { return !s.draining.Load() && s.rules.Load() != nil }

func (s *Server) readiness() (rulesapi.Readiness, bool) {
	out := rulesapi.Readiness{Status: rulesapi.ReadinessStatusReady, Rulesets: []rulesapi.RulesetInfo{}, MissingOperators: []string{}}
	rs := s.rules.Load()
	if rs != nil {
		out.Rulesets, out.MissingOperators = rs.infos, rs.missing
	}
	if st := s.last.Load(); st != nil {
		out.LastReload = &struct {
			At       time.Time              `json:"at"`
			Ok       bool                   `json:"ok"`
			Problems []rulesapi.LoadProblem `json:"problems"`
		}{At: st.at, Ok: st.ok, Problems: st.problems}
	}
	switch {
	case s.draining.Load():
		out.Status = rulesapi.ReadinessStatusDraining
	case rs == nil:
		out.Status = rulesapi.ReadinessStatusNotReady
	}
	return out, out.Status == rulesapi.ReadinessStatusReady
}

// lookup returns the published ruleset id, NOT_READY before any rules, or NOT_FOUND.
func (s *Server) lookup(id string) (*entry, error) {
	rs := s.rules.Load()
	if rs == nil {
		return nil, newError(rulesapi.ErrorCodeNOTREADY, "see GET /readyz for the load problems", "no rules are loaded yet")
	}
	e := rs.byID[id]
	if e == nil {
		return nil, newError(rulesapi.ErrorCodeNOTFOUND, "GET /rulesets lists the loaded rulesets", "no ruleset %q is loaded", id)
	}
	return e, nil
}

// engineError maps an engine diagnostic to the error body.
func engineError(err error) error {
	var d *engine.Diagnostic
	if !errors.As(err, &d) {
		return err
	}
	hint := ""
	if d.Pointer != "" {
		hint = "the problem is at " + d.Pointer + " of the request"
	}
	switch d.Code {
	case "BAD_REQUEST":
		return &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: d.Message, Hint: hint, Cause: err}
	case "EVALUATION_ERROR":
		return &Error{Code: rulesapi.ErrorCodeEVALUATIONERROR, Message: d.Message, Hint: hint, Cause: err}
	case "CHANNEL_UNAVAILABLE":
		return &Error{Code: rulesapi.ErrorCodeCHANNELUNAVAILABLE, Message: d.Message, Hint: "the ruleset's channels are listed by GET /rulesets", Cause: err}
	}
	return err
}
