package httpapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/projects"
)

// rootModule names the root folder "." as a run's tree does; features saved before it was so are
// stored with "".
func rootModule(m string) string {
	if m == "" {
		return "."
	}
	return m
}

func toDiagnostics(ds []features.Diagnostic) []serverapi.Diagnostic {
	out := make([]serverapi.Diagnostic, 0, len(ds))
	for _, d := range ds {
		out = append(out, serverapi.Diagnostic{Path: nonEmpty(d.Path), Line: d.Line, Column: d.Column, Severity: serverapi.Severity(d.Severity), Rule: d.Rule, Message: d.Message})
	}
	return out
}

// featureProject is what the feature service needs of a project: its id and lint settings.
func featureProject(p project) features.Project {
	st := projects.DecodeSettings(p.Settings)
	return features.Project{ID: p.ID, Slug: p.Slug, DisabledRules: st.DisabledLintRules, TagPattern: st.TagPattern}
}

func cleanFeaturePath(p string) (string, error) {
	clean, err := features.CleanPath(p)
	if err != nil {
		return "", apierr.New(apierr.ValidationFailed, "the feature path is not valid", "path parameter \"path\": "+err.Error())
	}
	return clean, nil
}

func toFeature(f features.Stored) serverapi.Feature {
	out := serverapi.Feature{Path: f.Path, Module: rootModule(f.Module), Name: f.Name, Tags: f.Tags, Content: f.Content, Etag: f.Etag,
		Scenarios: []serverapi.ScenarioOutline{}, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if doc, _ := features.Parse(f.Content); doc != nil {
		out.Description = nonEmpty(doc.Description)
		for _, sc := range doc.Scenarios {
			out.Scenarios = append(out.Scenarios, serverapi.ScenarioOutline{Name: sc.Name, Line: sc.Line, Tags: sc.Tags, Outline: sc.Outline})
		}
	}
	return out
}

// ListFeatures lists a project's features by path; folders are modules.
func (s *Server) ListFeatures(ctx context.Context, req serverapi.ListFeaturesRequestObject) (serverapi.ListFeaturesResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	f := features.ListFilter{After: after, Limit: pageLimit(req.Params.Limit)}
	if req.Params.Prefix != nil {
		f.Prefix = *req.Params.Prefix
	}
	if req.Params.Tag != nil {
		f.Tag = *req.Params.Tag
	}
	rows, err := s.Features.List(ctx, p.ID, f)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, f.Limit, func(f features.Stored) string { return f.Path })
	out := featureListJSON{Items: make([]serverapi.FeatureSummary, 0, len(items)), NextCursor: next}
	for _, f := range items {
		tags := f.Tags
		if tags == nil {
			tags = []string{}
		}
		out.Items = append(out.Items, serverapi.FeatureSummary{Path: f.Path, Module: rootModule(f.Module), Name: f.Name, Tags: tags, ScenarioCount: f.ScenarioCount,
			Etag: f.Etag, SizeBytes: f.SizeBytes, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt})
	}
	return out, nil
}

// GetFeature returns a feature with its ETag (304 when If-None-Match matches).
func (s *Server) GetFeature(ctx context.Context, req serverapi.GetFeatureRequestObject) (serverapi.GetFeatureResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	path, err := cleanFeaturePath(req.Path)
	if err != nil {
		return nil, err
	}
	f, err := s.Features.Get(ctx, p.ID, path)
	if err != nil {
		return nil, err
	}
	if req.Params.IfNoneMatch != nil && etagMatches(*req.Params.IfNoneMatch, f.Etag) {
		return serverapi.GetFeature304Response{}, nil
	}
	return serverapi.GetFeature200JSONResponse{Body: toFeature(f), Headers: serverapi.GetFeature200ResponseHeaders{ETag: ptr(f.Etag)}}, nil
}

// etagMatches reports whether an If-Match / If-None-Match list names etag (weak comparison; * matches).
func etagMatches(header, etag string) bool { return features.ETagMatches(header, etag) }

// withDiagnostics adds the warnings of a saved feature to its answer: always a list, empty when
// there are none, so that a client sees the member.
func withDiagnostics(f serverapi.Feature, diags []features.Diagnostic) serverapi.Feature {
	d := toDiagnostics(diags)
	if d == nil {
		d = []serverapi.Diagnostic{}
	}
	f.Diagnostics = &d
	return f
}

func diagnosticsResponse(diags []features.Diagnostic) serverapi.FeatureDiagnostics {
	first := diags[0]
	for _, d := range diags {
		if d.Severity == features.SeverityError {
			first = d
			break
		}
	}
	return serverapi.FeatureDiagnostics{Diagnostics: toDiagnostics(diags), Error: serverapi.ErrorBody{Code: serverapi.ErrorCode(apierr.Unprocessable),
		Message: fmt.Sprintf("the feature has errors: line %d, column %d: %s", first.Line, first.Column, first.Message),
		Hint:    "body member /content: fix the diagnostics of severity error (see diagnostics); nothing was saved"}}
}

// PutFeature creates or replaces a feature after parsing and linting it; any error diagnostic
// is 422 and nothing is saved. Replacing needs If-Match with the current ETag.
func (s *Server) PutFeature(ctx context.Context, req serverapi.PutFeatureRequestObject) (serverapi.PutFeatureResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	path, err := cleanFeaturePath(req.Path)
	if err != nil {
		return nil, err
	}
	saved, err := s.Features.Save(ctx, featureProject(p), path, req.Body.Content, req.Params.IfMatch)
	if err != nil {
		return nil, err
	}
	if saved.Refused {
		return serverapi.PutFeature422JSONResponse(diagnosticsResponse(saved.Diagnostics)), nil
	}
	f := saved.Feature
	if !saved.Created {
		return serverapi.PutFeature200JSONResponse{Body: withDiagnostics(toFeature(f), saved.Diagnostics), Headers: serverapi.PutFeature200ResponseHeaders{ETag: ptr(f.Etag)}}, nil
	}
	return serverapi.PutFeature201JSONResponse{Body: withDiagnostics(toFeature(f), saved.Diagnostics), Headers: serverapi.PutFeature201ResponseHeaders{ETag: ptr(f.Etag)}}, nil
}

// DeleteFeature deletes a feature; If-Match, when sent, must name its ETag.
func (s *Server) DeleteFeature(ctx context.Context, req serverapi.DeleteFeatureRequestObject) (serverapi.DeleteFeatureResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	path, err := cleanFeaturePath(req.Path)
	if err != nil {
		return nil, err
	}
	if err := s.Features.Delete(ctx, featureProject(p), path, req.Params.IfMatch); err != nil {
		return nil, err
	}
	return serverapi.DeleteFeature204Response{}, nil
}

// ValidateFeature parses and (unless lint is false) lints content without saving it.
func (s *Server) ValidateFeature(ctx context.Context, req serverapi.ValidateFeatureRequestObject) (serverapi.ValidateFeatureResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	path := ""
	if req.Body.Path != nil && *req.Body.Path != "" {
		if path, err = features.CleanPath(*req.Body.Path); err != nil {
			return nil, apierr.New(apierr.ValidationFailed, "the feature path is not valid", "body member /path: "+err.Error())
		}
	}
	var diags []features.Diagnostic
	if req.Body.Lint != nil && !*req.Body.Lint {
		_, diags = features.Parse(req.Body.Content)
		for i := range diags {
			diags[i].Path = path
		}
	} else {
		cfg, err := s.Features.LintConfig(ctx, featureProject(p))
		if err != nil {
			return nil, err
		}
		_, diags = features.Check(path, req.Body.Content, cfg)
	}
	return serverapi.ValidateFeature200JSONResponse{Valid: !features.HasErrors(diags), Diagnostics: toDiagnostics(diags)}, nil
}

// LintFeatures lints the project's features, or those under the given paths.
func (s *Server) LintFeatures(ctx context.Context, req serverapi.LintFeaturesRequestObject) (serverapi.LintFeaturesResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	cfg, err := s.Features.LintConfig(ctx, featureProject(p))
	if err != nil {
		return nil, err
	}
	var paths []string
	if req.Body != nil && req.Body.Paths != nil {
		paths = *req.Body.Paths
	}
	if req.Body != nil && req.Body.Rules != nil {
		cfg.Only = map[string]bool{}
		for i, r := range *req.Body.Rules {
			if !features.KnownRule(r) {
				return nil, apierr.New(apierr.ValidationFailed, "unknown lint rule "+r, fmt.Sprintf("body member /rules/%d: use an id listed in rules of this answer", i))
			}
			cfg.Only[r] = true
		}
	}
	rows, err := s.Features.All(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	out := serverapi.LintFeatures200JSONResponse{Diagnostics: []serverapi.Diagnostic{}}
	var all []features.Diagnostic
	for _, f := range rows {
		if !selected(f.Path, paths) {
			continue
		}
		out.Summary.Files++
		_, diags := features.Check(f.Path, f.Content, cfg)
		all = append(all, diags...)
	}
	features.Sort(all)
	for _, d := range all {
		switch d.Severity {
		case features.SeverityError:
			out.Summary.Errors++
		case features.SeverityWarning:
			out.Summary.Warnings++
		default:
			out.Summary.Infos++
		}
	}
	out.Diagnostics = toDiagnostics(all)
	for _, r := range features.Rules() {
		enabled := !cfg.Disabled[r.ID]
		if (r.ID == features.RuleUnknownStep || r.ID == features.RuleAmbiguousStep) && cfg.Steps == nil {
			enabled = false
		}
		out.Rules = append(out.Rules, struct {
			Description string `json:"description"`
			Enabled     bool   `json:"enabled"`
			Id          string `json:"id"`
		}{Description: r.Description, Enabled: enabled, Id: r.ID})
	}
	return out, nil
}

// selected reports whether a feature path is one of paths or lies below one of them (all when empty).
func selected(path string, paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, p := range paths {
		p = strings.Trim(p, "/")
		if p == "" || path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// ListSteps lists the step definitions available to a project: the built-in library and the
// project's processes, each with its usage count.
func (s *Server) ListSteps(ctx context.Context, req serverapi.ListStepsRequestObject) (serverapi.ListStepsResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	var defs []features.StepDef
	if s.Steps != nil {
		defs = s.Steps.Definitions()
	}
	procs, err := s.Features.AllProcesses(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	for _, pr := range procs {
		defs = append(defs, features.ProcessDef(pr.Name, pr.Description, pr.Parameters))
	}
	usage, err := s.stepUsage(ctx, p)
	if err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	out := serverapi.ListSteps200JSONResponse{Items: []serverapi.StepDefinition{}}
	// Built-in ids sort before process:… ids, so id order is the page order.
	for _, d := range defs {
		if after != nil && d.ID <= *after {
			continue
		}
		if req.Params.Category != nil && string(*req.Params.Category) != d.Category {
			continue
		}
		if qs := req.Params.Q; qs != nil && *qs != "" {
			needle := strings.ToLower(*qs)
			if !strings.Contains(strings.ToLower(d.ID+" "+d.Pattern+" "+d.Description), needle) {
				continue
			}
		}
		if len(out.Items) == limit {
			out.NextCursor = encodeCursor(out.Items[limit-1].Id)
			break
		}
		params := make([]serverapi.StepParameter, 0, len(d.Parameters))
		for _, pa := range d.Parameters {
			params = append(params, serverapi.StepParameter{Name: pa.Name, Type: pa.Type, Description: nonEmpty(pa.Description)})
		}
		sd := serverapi.StepDefinition{Id: d.ID, Source: serverapi.StepDefinitionSource(d.Source), Category: serverapi.StepDefinitionCategory(d.Category),
			Keyword: serverapi.StepDefinitionKeyword(d.Keyword), Pattern: d.Pattern, Parameters: params, Description: nonEmpty(d.Description), UsageCount: usage[d.ID]}
		if len(d.Examples) > 0 {
			sd.Examples = ptr(d.Examples)
		}
		out.Items = append(out.Items, sd)
	}
	return out, nil
}

// RecordFeature turns a recording into a draft feature and, on request, saves it when it validates.
func (s *Server) RecordFeature(ctx context.Context, req serverapi.RecordFeatureRequestObject) (serverapi.RecordFeatureResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	b := req.Body
	save := b.Save != nil && *b.Save
	path := ""
	if b.Path != nil && *b.Path != "" {
		if path, err = features.CleanPath(*b.Path); err != nil {
			return nil, apierr.New(apierr.ValidationFailed, "the feature path is not valid", "body member /path: "+err.Error())
		}
	}
	if save && path == "" {
		return nil, apierr.New(apierr.ValidationFailed, "saving needs a path", "body member /path: required when save is true")
	}
	var content string
	switch b.Format {
	case serverapi.RecordRequestFormatActions:
		if b.Actions == nil {
			return nil, apierr.New(apierr.ValidationFailed, "the recording has no actions", "body member /actions: required when format is actions")
		}
		actions := make([]features.Action, 0, len(*b.Actions))
		for _, a := range *b.Actions {
			actions = append(actions, features.Action{Type: string(a.Type), Selector: deref(a.Selector), Value: deref(a.Value), URL: deref(a.Url), Text: deref(a.Text), Name: deref(a.Name)})
		}
		content, err = features.DraftFromActions(b.Name, actions)
	case serverapi.RecordRequestFormatHar:
		if b.Har == nil {
			return nil, apierr.New(apierr.ValidationFailed, "the recording has no HAR document", "body member /har: required when format is har")
		}
		content, err = features.DraftFromHAR(b.Name, *b.Har)
	}
	if err != nil {
		var re *features.RecordError
		member := "body"
		if errors.As(err, &re) {
			member = "body member /" + re.Member
			if re.Index >= 0 && b.Format == serverapi.RecordRequestFormatActions {
				member = fmt.Sprintf("body member /actions/%d/%s", re.Index, re.Member)
			}
		}
		return nil, apierr.Wrap(err, apierr.Unprocessable, "the recording cannot become a feature", member+": "+err.Error())
	}
	out := serverapi.RecordFeature200JSONResponse{Content: content, Path: nonEmpty(path), Diagnostics: []serverapi.Diagnostic{}}
	cfg, err := s.Features.LintConfig(ctx, featureProject(p))
	if err != nil {
		return nil, err
	}
	doc, diags := features.Check(path, content, cfg)
	out.Diagnostics = toDiagnostics(diags)
	if !save || features.HasErrors(diags) {
		audit.NoChange(ctx)
		return out, nil
	}
	f, err := s.Features.SaveNew(ctx, featureProject(p), path, content, doc, string(b.Format))
	if err != nil {
		return nil, err
	}
	out.Saved, out.Etag = true, ptr(f.Etag)
	return out, nil
}
