package ruleserver

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/gen/rulesapi"
)

// GetLivez answers 200 while the process runs.
func (s *Server) GetLivez(context.Context, rulesapi.GetLivezRequestObject) (rulesapi.GetLivezResponseObject, error) {
	return rulesapi.GetLivez200JSONResponse{Status: rulesapi.LivenessStatusOk}, nil
}

// GetReadyz answers 200 with the loaded rulesets, or 503 before the first successful load and
// while draining; both carry the last reload's problems.
func (s *Server) GetReadyz(context.Context, rulesapi.GetReadyzRequestObject) (rulesapi.GetReadyzResponseObject, error) {
	r, ok := s.readiness()
	if !ok {
		return rulesapi.GetReadyz503JSONResponse(r), nil
	}
	return rulesapi.GetReadyz200JSONResponse(r), nil
}

// ListRulesets lists the published rulesets; those from bundles carry id, version, checksum and
// source only.
func (s *Server) ListRulesets(context.Context, rulesapi.ListRulesetsRequestObject) (rulesapi.ListRulesetsResponseObject, error) {
	rs := s.rules.Load()
	if rs == nil {
		return rulesapi.ListRulesets200JSONResponse{Items: []rulesapi.RulesetInfo{}}, nil
	}
	return rulesapi.ListRulesets200JSONResponse{Items: rs.infos}, nil
}

// GetBundle answers the ruleset's bundle with its checksum as entity tag, or 304 when
// If-None-Match matches it.
func (s *Server) GetBundle(_ context.Context, req rulesapi.GetBundleRequestObject) (rulesapi.GetBundleResponseObject, error) {
	e, err := s.lookup(req.RulesetId)
	if err != nil {
		return nil, err
	}
	if e.bundle == nil {
		return nil, newError(rulesapi.ErrorCodeCHANNELUNAVAILABLE, "use GET /rulesets/{rulesetId}/manifest", "ruleset %q has no bundle", e.rs.ID())
	}
	return cached{etag: e.etag, body: e.bundle, notModified: noneMatch(headerList(req.Params.IfNoneMatch), e.etag)}, nil
}

// GetManifest answers one channel's manifest, as GetBundle does; a channel the ruleset lacks is
// CHANNEL_UNAVAILABLE.
func (s *Server) GetManifest(_ context.Context, req rulesapi.GetManifestRequestObject) (rulesapi.GetManifestResponseObject, error) {
	e, err := s.lookup(req.RulesetId)
	if err != nil {
		return nil, err
	}
	m := e.manifests[string(req.Params.Channel)]
	if m == nil {
		_, err := e.rs.Manifest(string(req.Params.Channel))
		return nil, engineError(err)
	}
	return cached{etag: e.etag, body: m, notModified: noneMatch(headerList(req.Params.IfNoneMatch), e.etag)}, nil
}

// Evaluate shape-checks the raw body with the engine (the check every runtime applies) and
// evaluates it against the ruleset it names.
func (s *Server) Evaluate(ctx context.Context, _ rulesapi.EvaluateRequestObject) (rulesapi.EvaluateResponseObject, error) {
	b, err := s.evaluate(rawBody(ctx), nil)
	if err != nil {
		return nil, err
	}
	return jsonBody(b), nil
}

// evaluate appends to out the canonical JSON result of the evaluation request body. When a scan
// of the body's member names finds the ruleset plainly, the engine decodes the body straight into
// the paths the rules read; anything else, and every refusal, takes the full parse, whose answers
// are the reference (EvaluateJSONInto refuses exactly what ParseRequest and EvaluateInto refuse).
func (s *Server) evaluate(body, out []byte) ([]byte, error) {
	if b, ok := s.evaluateDirect(body, out); ok {
		return b, nil
	}
	return s.evaluateParsed(body, out)
}

// evaluateDirect is evaluate by the scan and the engine's direct decode; ok is false when it
// cannot answer, refusals included.
func (s *Server) evaluateDirect(body, out []byte) (b []byte, ok bool) {
	id, ok := rulesetMember(body)
	if !ok {
		return nil, false
	}
	e, err := s.lookup(id)
	if err != nil {
		return nil, false
	}
	res := resultPool.Get().(*engine.Result)
	defer resultPool.Put(res)
	if err := e.rs.EvaluateJSONInto(res, "", body); err != nil {
		return nil, false
	}
	b, err = res.AppendJSON(out)
	return b, err == nil
}

// evaluateParsed is evaluate by the full parse.
func (s *Server) evaluateParsed(body, out []byte) ([]byte, error) {
	req, err := engine.ParseRequest(body)
	if err != nil {
		return nil, requestError(body, err)
	}
	if req.Ruleset == "" { // optional for the engine, required by openapi/rules.yaml
		return nil, newError(rulesapi.ErrorCodeBADREQUEST, "the problem is at /ruleset of the request", "ruleset is missing: name the ruleset to evaluate")
	}
	e, err := s.lookup(req.Ruleset)
	if err != nil {
		return nil, err
	}
	res := resultPool.Get().(*engine.Result)
	defer resultPool.Put(res)
	if err := e.rs.EvaluateInto(res, "", req); err != nil {
		return nil, engineError(err)
	}
	if out, err = res.AppendJSON(out); err != nil {
		return nil, engineError(err)
	}
	return out, nil
}

// resultPool keeps evaluation results for reuse: EvaluateInto writes into their storage.
var resultPool = sync.Pool{New: func() any { return new(engine.Result) }}

// cached is a bundle or manifest answer: the bytes encoded at load time, or 304.
type cached struct {
	etag        string
	body        []byte
	notModified bool
}

func (c cached) visit(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("ETag", c.etag)
	h.Set("Cache-Control", "no-cache") // cache, but revalidate: a reload may change the rules
	if c.notModified {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(c.body)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(c.body)
	return err
}

func (c cached) VisitGetBundleResponse(w http.ResponseWriter) error   { return c.visit(w) }
func (c cached) VisitGetManifestResponse(w http.ResponseWriter) error { return c.visit(w) }

// jsonBody is an evaluation result, already canonical JSON.
type jsonBody []byte

func (b jsonBody) VisitEvaluateResponse(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}

func headerList(v *string) []string {
	if v == nil {
		return nil
	}
	return []string{*v}
}
