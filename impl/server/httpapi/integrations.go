package httpapi

import (
	"context"
	"encoding/json"
	"net/url"
	"sort"
	"time"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/store"
)

func integrationNotFound(kind serverapi.IntegrationKind) error {
	return apierr.New(apierr.NotFound, "the project has no "+string(kind)+" integration", "configure it with PUT /api/projects/{slug}/integrations/"+string(kind))
}

// toIntegration shows the configuration without secrets (hasSecret tells whether one is stored).
func toIntegration(row db.Integration) (serverapi.Integration, error) {
	out := serverapi.Integration{Kind: serverapi.IntegrationKind(row.Kind), Enabled: row.Enabled, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt}
	switch row.Kind {
	case "git":
		var c integrations.GitConfig
		if err := json.Unmarshal(row.Config, &c); err != nil {
			return out, err
		}
		out.Git = &serverapi.GitConfig{Url: c.URL, Branch: c.Branch, Directory: c.Directory, AutoSync: c.AutoSync,
			Auth: serverapi.GitAuth{Method: serverapi.GitAuthMethod(c.AuthMethod), Username: nonEmpty(c.Username), HasSecret: len(row.SecretEnc) > 0}}
	case "webhook":
		var c integrations.WebhookConfig
		if err := json.Unmarshal(row.Config, &c); err != nil {
			return out, err
		}
		events := make([]serverapi.WebhookEvent, 0, len(c.Events))
		for _, e := range c.Events {
			events = append(events, serverapi.WebhookEvent(e))
		}
		out.Webhook = &serverapi.WebhookConfig{Url: c.URL, Events: events, HasSecret: len(row.SecretEnc) > 0}
	}
	if len(row.LastTest) > 0 {
		var t serverapi.IntegrationTestResult
		if json.Unmarshal(row.LastTest, &t) == nil {
			out.LastTest = &t
		}
	}
	if len(row.LastSync) > 0 {
		var r serverapi.IntegrationSyncResult
		if json.Unmarshal(row.LastSync, &r) == nil {
			out.LastSync = &r
		}
	}
	return out, nil
}

func (s *Server) integration(ctx context.Context, q *db.Queries, p project, kind serverapi.IntegrationKind) (db.Integration, error) {
	row, err := q.GetIntegration(ctx, db.GetIntegrationParams{ProjectID: p.ID, Kind: string(kind)})
	if store.IsNotFound(err) {
		return row, integrationNotFound(kind)
	}
	return row, err
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
	rows, err := s.Store.ListIntegrations(ctx, db.ListIntegrationsParams{ProjectID: p.ID, AfterKind: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := serverapi.ListIntegrations200JSONResponse{Items: []serverapi.Integration{}}
	for i, row := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].Kind)
			break
		}
		in, err := toIntegration(row)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, in)
	}
	return out, nil
}

// GetIntegration returns an integration with its secrets masked.
func (s *Server) GetIntegration(ctx context.Context, req serverapi.GetIntegrationRequestObject) (serverapi.GetIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	row, err := s.integration(ctx, s.Store.Queries, p, req.Kind)
	if err != nil {
		return nil, err
	}
	out, err := toIntegration(row)
	if err != nil {
		return nil, err
	}
	return serverapi.GetIntegration200JSONResponse(out), nil
}

// integrationConfig checks a put body and returns the stored configuration and the new secret
// (nil: keep the stored one; empty: none).
func (s *Server) integrationConfig(kind serverapi.IntegrationKind, b *serverapi.IntegrationPut) ([]byte, *string, error) {
	switch kind {
	case serverapi.IntegrationKindGit:
		if b.Git == nil || b.Webhook != nil {
			return nil, nil, apierr.New(apierr.ValidationFailed, "a git integration is configured by the git member", "body member /git: required; /webhook: not allowed here")
		}
		g := b.Git
		if err := s.Git.CheckURL(g.Url); err != nil {
			return nil, nil, apierr.New(apierr.ValidationFailed, "the repository URL cannot be used", "body member /git/url: "+err.Error())
		}
		c := integrations.GitConfig{URL: g.Url, Branch: "main", Directory: deref(g.Directory), AuthMethod: "none", AutoSync: g.AutoSync != nil && *g.AutoSync}
		if g.Branch != nil {
			c.Branch = *g.Branch
		}
		var secret *string
		if g.Auth != nil {
			c.AuthMethod, c.Username, secret = string(g.Auth.Method), deref(g.Auth.Username), g.Auth.Secret
		}
		if c.AuthMethod == "none" {
			secret = ptr("")
		}
		raw, _ := json.Marshal(c)
		return raw, secret, nil
	default:
		if b.Webhook == nil || b.Git != nil {
			return nil, nil, apierr.New(apierr.ValidationFailed, "a webhook integration is configured by the webhook member", "body member /webhook: required; /git: not allowed here")
		}
		w := b.Webhook
		if u, err := url.Parse(w.Url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, apierr.New(apierr.ValidationFailed, "the webhook URL cannot be used", "body member /webhook/url: an absolute http or https URL")
		}
		c := integrations.WebhookConfig{URL: w.Url}
		for _, e := range w.Events {
			c.Events = append(c.Events, string(e))
		}
		raw, _ := json.Marshal(c)
		return raw, w.Secret, nil
	}
}

// PutIntegration creates or replaces an integration; secrets are sealed, an absent one is kept.
func (s *Server) PutIntegration(ctx context.Context, req serverapi.PutIntegrationRequestObject) (serverapi.PutIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	raw, secret, err := s.integrationConfig(req.Kind, req.Body)
	if err != nil {
		return nil, err
	}
	enabled := req.Body.Enabled == nil || *req.Body.Enabled
	var row db.UpsertIntegrationRow
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		var enc []byte
		old, err := q.GetIntegration(ctx, db.GetIntegrationParams{ProjectID: p.ID, Kind: string(req.Kind)})
		switch {
		case err == nil:
			enc = old.SecretEnc
		case !store.IsNotFound(err):
			return err
		}
		if secret != nil {
			enc = nil
			if *secret != "" {
				if enc, err = s.Secrets.Seal([]byte(*secret), integrations.SecretAD(p.ID, string(req.Kind))); err != nil {
					return err
				}
			}
		}
		if req.Kind == serverapi.IntegrationKindGit && req.Body.Git.Auth != nil && req.Body.Git.Auth.Method != "none" && len(enc) == 0 {
			return apierr.New(apierr.ValidationFailed, "token and ssh authentication need a secret", "body member /git/auth/secret: the token or private key")
		}
		row, err = q.UpsertIntegration(ctx, db.UpsertIntegrationParams{ProjectID: p.ID, Kind: string(req.Kind), Enabled: enabled, Config: raw, SecretEnc: enc})
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "integration", Name: p.Slug + "/" + string(req.Kind)}, map[string]any{"enabled": enabled, "secretChanged": secret != nil})
	})
	if err != nil {
		return nil, err
	}
	out, err := toIntegration(db.Integration{ProjectID: row.ProjectID, Kind: row.Kind, Enabled: row.Enabled, Config: row.Config, SecretEnc: row.SecretEnc,
		LastTest: row.LastTest, LastSync: row.LastSync, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt})
	if err != nil {
		return nil, err
	}
	if row.Inserted {
		return serverapi.PutIntegration201JSONResponse(out), nil
	}
	return serverapi.PutIntegration200JSONResponse(out), nil
}

// DeleteIntegration removes an integration.
func (s *Server) DeleteIntegration(ctx context.Context, req serverapi.DeleteIntegrationRequestObject) (serverapi.DeleteIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		n, err := q.DeleteIntegration(ctx, db.DeleteIntegrationParams{ProjectID: p.ID, Kind: string(req.Kind)})
		if err != nil {
			return err
		}
		if n == 0 {
			return integrationNotFound(req.Kind)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "integration", Name: p.Slug + "/" + string(req.Kind)}, nil)
	})
	if err != nil {
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
	row, err := s.integration(ctx, s.Store.Queries, p, req.Kind)
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	start := time.Now()
	switch row.Kind {
	case "git":
		var c integrations.GitConfig
		if c, err = integrations.LoadGit(s.Secrets, row); err == nil {
			err = s.Git.Test(tctx, c)
		}
	default:
		var c integrations.WebhookConfig
		if c, err = integrations.LoadWebhook(s.Secrets, row); err == nil {
			err = s.Webhook.Test(tctx, c)
		}
	}
	res := serverapi.IntegrationTestResult{Ok: err == nil, LatencyMs: ptr(int(time.Since(start).Milliseconds())), CheckedAt: time.Now().UTC()}
	if err != nil {
		res.Error = ptr(err.Error())
	}
	raw, _ := json.Marshal(res)
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		if err := q.SetIntegrationLastTest(ctx, db.SetIntegrationLastTestParams{ProjectID: p.ID, Kind: row.Kind, LastTest: raw}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "integration", Name: p.Slug + "/" + row.Kind}, map[string]any{"ok": res.Ok})
	})
	if err != nil {
		return nil, err
	}
	return serverapi.TestIntegration200JSONResponse(res), nil
}

// SyncIntegration brings the project's features in line with the Git repository: files added or
// changed there are written (local edits are overwritten), files a previous sync wrote and the
// repository no longer has are deleted; features created in sdods are left alone.
func (s *Server) SyncIntegration(ctx context.Context, req serverapi.SyncIntegrationRequestObject) (serverapi.SyncIntegrationResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	if req.Kind != serverapi.IntegrationKindGit {
		return nil, apierr.New(apierr.Conflict, "only a git integration syncs", "path parameter \"kind\": git")
	}
	row, err := s.integration(ctx, s.Store.Queries, p, req.Kind)
	if err != nil {
		return nil, err
	}
	if !row.Enabled {
		return nil, apierr.New(apierr.Conflict, "the git integration is disabled", "enable it with PUT /api/projects/{slug}/integrations/git")
	}
	c, err := integrations.LoadGit(s.Secrets, row)
	if err != nil {
		return nil, err
	}
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	snap, err := s.Git.Fetch(fctx, c)
	if err != nil {
		return nil, apierr.Wrap(err, apierr.Conflict, "the repository cannot be read", err.Error()+"; check it with POST /api/projects/{slug}/integrations/git/test")
	}
	dryRun := req.Params.DryRun != nil && *req.Params.DryRun
	res := serverapi.IntegrationSyncResult{Commit: ptr(snap.Commit), DryRun: dryRun, Changes: []serverapi.FileChange{}}
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		current, err := q.AllFeatures(ctx, p.ID)
		if err != nil {
			return err
		}
		byPath := map[string]db.Feature{}
		for _, f := range current {
			byPath[f.Path] = f
		}
		paths := make([]string, 0, len(snap.Files))
		for path := range snap.Files {
			if _, err := features.CleanPath(path); err == nil {
				paths = append(paths, path)
			}
		}
		sort.Strings(paths)
		for _, path := range paths {
			content := snap.Files[path]
			cur, exists := byPath[path]
			delete(byPath, path)
			if exists && cur.Content == content && cur.SyncedEtag != nil && *cur.SyncedEtag == cur.Etag {
				continue
			}
			change := serverapi.FileChangeChangeAdded
			if exists {
				if cur.Content == content {
					// Same content, now owned by the repository.
					change = ""
				} else {
					change = serverapi.FileChangeChangeModified
				}
			}
			if change != "" {
				res.Changes = append(res.Changes, serverapi.FileChange{Path: path, Change: change})
			}
			if dryRun {
				continue
			}
			doc, _ := features.Parse(content)
			r := rowOf(path, content, doc)
			r.synced = ptr(r.etag)
			if _, err := saveFeature(ctx, q, p.ID, path, r, exists); err != nil {
				return err
			}
		}
		gone := make([]string, 0, len(byPath))
		for path, f := range byPath {
			if f.SyncedEtag != nil {
				gone = append(gone, path)
			}
		}
		sort.Strings(gone)
		for _, path := range gone {
			res.Changes = append(res.Changes, serverapi.FileChange{Path: path, Change: serverapi.FileChangeChangeDeleted})
			if !dryRun {
				if _, err := q.DeleteFeature(ctx, db.DeleteFeatureParams{ProjectID: p.ID, Path: path}); err != nil {
					return err
				}
			}
		}
		res.SyncedAt = time.Now().UTC()
		if !dryRun {
			raw, _ := json.Marshal(res)
			if err := q.SetIntegrationLastSync(ctx, db.SetIntegrationLastSyncParams{ProjectID: p.ID, Kind: row.Kind, LastSync: raw}); err != nil {
				return err
			}
		}
		return audit.Record(ctx, q, audit.Target{Kind: "integration", Name: p.Slug + "/git"}, map[string]any{"commit": snap.Commit, "changes": len(res.Changes), "dryRun": dryRun})
	})
	if err != nil {
		return nil, err
	}
	return serverapi.SyncIntegration200JSONResponse(res), nil
}
