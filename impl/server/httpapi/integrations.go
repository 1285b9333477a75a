package httpapi

import (
	"context"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/integrations"
)

func integrationProject(p project) integrations.Project {
	return integrations.Project{ID: p.ID, Slug: p.Slug}
}

// toIntegration shows the configuration without secrets (hasSecret tells whether one is stored).
func toIntegration(in integrations.Integration) serverapi.Integration {
	out := serverapi.Integration{Kind: serverapi.IntegrationKind(in.Kind), Enabled: in.Enabled, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt}
	if c := in.Git; c != nil {
		out.Git = &serverapi.GitConfig{Url: c.URL, Branch: c.Branch, Directory: c.Directory, AutoSync: c.AutoSync,
			Auth: serverapi.GitAuth{Method: serverapi.GitAuthMethod(c.AuthMethod), Username: nonEmpty(c.Username), HasSecret: in.HasSecret}}
	}
	if c := in.Webhook; c != nil {
		events := make([]serverapi.WebhookEvent, 0, len(c.Events))
		for _, e := range c.Events {
			events = append(events, serverapi.WebhookEvent(e))
		}
		out.Webhook = &serverapi.WebhookConfig{Url: c.URL, Events: events, HasSecret: in.HasSecret}
	}
	if t := in.LastTest; t != nil {
		out.LastTest = ptr(toTestResult(*t))
	}
	if r := in.LastSync; r != nil {
		out.LastSync = ptr(toSyncResult(*r))
	}
	return out
}

func toTestResult(t integrations.TestResult) serverapi.IntegrationTestResult {
	return serverapi.IntegrationTestResult{Ok: t.Ok, LatencyMs: t.LatencyMs, Error: t.Error, CheckedAt: t.CheckedAt}
}

func toSyncResult(r integrations.SyncResult) serverapi.IntegrationSyncResult {
	out := serverapi.IntegrationSyncResult{Commit: r.Commit, DryRun: r.DryRun, SyncedAt: r.SyncedAt, Changes: []serverapi.FileChange{}}
	for _, c := range r.Changes {
		out.Changes = append(out.Changes, serverapi.FileChange{Path: c.Path, Change: serverapi.FileChangeChange(c.Change)})
	}
	return out
}

// ListIntegrations lists a project's integrations by kind.
func (s *Server) ListIntegrations(ctx context.Context, req serverapi.ListIntegrationsRequestObject) (serverapi.ListIntegrationsResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Integrations.List(ctx, p.ID, after, limit)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(in integrations.Integration) string { return in.Kind })
	out := serverapi.ListIntegrations200JSONResponse{Items: []serverapi.Integration{}, NextCursor: next}
	for _, in := range items {
		out.Items = append(out.Items, toIntegration(in))
	}
	return out, nil
}

// GetIntegration returns an integration with its secrets masked.
func (s *Server) GetIntegration(ctx context.Context, req serverapi.GetIntegrationRequestObject) (serverapi.GetIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	in, err := s.Integrations.Get(ctx, p.ID, string(req.Kind))
	if err != nil {
		return nil, err
	}
	return serverapi.GetIntegration200JSONResponse(toIntegration(in)), nil
}

// integrationPut checks that a put body configures its kind and converts it.
func integrationPut(kind serverapi.IntegrationKind, b *serverapi.IntegrationPut) (integrations.Put, error) {
	in := integrations.Put{Kind: string(kind), Enabled: b.Enabled == nil || *b.Enabled}
	switch kind {
	case serverapi.IntegrationKindGit:
		if b.Git == nil || b.Webhook != nil {
			return in, apierr.New(apierr.ValidationFailed, "a git integration is configured by the git member", "body member /git: required; /webhook: not allowed here")
		}
		g := b.Git
		in.Git = &integrations.GitConfig{URL: g.Url, Branch: "main", Directory: deref(g.Directory), AuthMethod: "none", AutoSync: g.AutoSync != nil && *g.AutoSync}
		if g.Branch != nil {
			in.Git.Branch = *g.Branch
		}
		if g.Auth != nil {
			in.Git.AuthMethod, in.Git.Username, in.Secret = string(g.Auth.Method), deref(g.Auth.Username), g.Auth.Secret
		}
	default:
		if b.Webhook == nil || b.Git != nil {
			return in, apierr.New(apierr.ValidationFailed, "a webhook integration is configured by the webhook member", "body member /webhook: required; /git: not allowed here")
		}
		in.Webhook = &integrations.WebhookConfig{URL: b.Webhook.Url}
		for _, e := range b.Webhook.Events {
			in.Webhook.Events = append(in.Webhook.Events, string(e))
		}
		in.Secret = b.Webhook.Secret
	}
	return in, nil
}

// PutIntegration creates or replaces an integration; secrets are sealed, an absent one is kept.
func (s *Server) PutIntegration(ctx context.Context, req serverapi.PutIntegrationRequestObject) (serverapi.PutIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	in, err := integrationPut(req.Kind, req.Body)
	if err != nil {
		return nil, err
	}
	saved, created, err := s.Integrations.Put(ctx, integrationProject(p), in)
	if err != nil {
		return nil, err
	}
	if created {
		return serverapi.PutIntegration201JSONResponse(toIntegration(saved)), nil
	}
	return serverapi.PutIntegration200JSONResponse(toIntegration(saved)), nil
}

// DeleteIntegration removes an integration.
func (s *Server) DeleteIntegration(ctx context.Context, req serverapi.DeleteIntegrationRequestObject) (serverapi.DeleteIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	if err := s.Integrations.Delete(ctx, integrationProject(p), string(req.Kind)); err != nil {
		return nil, err
	}
	return serverapi.DeleteIntegration204Response{}, nil
}

// TestIntegration checks connectivity (Git: the branch on the remote; webhook: a ping delivery)
// and reports the error it met in the body.
func (s *Server) TestIntegration(ctx context.Context, req serverapi.TestIntegrationRequestObject) (serverapi.TestIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	res, err := s.Integrations.Test(ctx, integrationProject(p), string(req.Kind))
	if err != nil {
		return nil, err
	}
	return serverapi.TestIntegration200JSONResponse(toTestResult(res)), nil
}

// SyncIntegration brings the project's features in line with the Git repository: files added or
// changed there are written (local edits are overwritten), files a previous sync wrote and the
// repository no longer has are deleted; features created in sdods are left alone.
func (s *Server) SyncIntegration(ctx context.Context, req serverapi.SyncIntegrationRequestObject) (serverapi.SyncIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	res, err := s.Integrations.Sync(ctx, integrationProject(p), string(req.Kind), req.Params.DryRun != nil && *req.Params.DryRun)
	if err != nil {
		return nil, err
	}
	return serverapi.SyncIntegration200JSONResponse(toSyncResult(res)), nil
}
