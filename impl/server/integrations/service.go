package integrations

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store"
)

// The integration kinds.
const (
	KindGit     = "git"
	KindWebhook = "webhook"
)

// Service owns a project's integrations: their configuration with sealed secrets, the
// connectivity test and the Git sync, which reconciles the project's features with the
// repository (features.Reconcile) in the transaction that records the sync.
type Service struct {
	st      *store.Store
	box     *secrets.Box
	git     Git
	webhook Webhook
}

// NewService returns the integration service.
func NewService(st *store.Store, box *secrets.Box, git Git, webhook Webhook) *Service {
	return &Service{st: st, box: box, git: git, webhook: webhook}
}

// Project is what the service needs of a project.
type Project struct {
	ID   uuid.UUID
	Slug string
}

// TestResult is the outcome of a connectivity test, stored as the integration's last test.
type TestResult struct {
	Ok        bool      `json:"ok"`
	LatencyMs *int      `json:"latencyMs,omitempty"`
	Error     *string   `json:"error,omitempty"`
	CheckedAt time.Time `json:"checkedAt"`
}

// SyncResult is the outcome of a Git sync, stored as the integration's last sync.
type SyncResult struct {
	Commit   *string               `json:"commit,omitempty"`
	DryRun   bool                  `json:"dryRun"`
	Changes  []features.FileChange `json:"changes"`
	SyncedAt time.Time             `json:"syncedAt"`
}

// Integration is an integration as shown: its configuration without secrets (HasSecret tells
// whether one is stored).
type Integration struct {
	Kind                 string
	Enabled              bool
	Git                  *GitConfig
	Webhook              *WebhookConfig
	HasSecret            bool
	LastTest             *TestResult
	LastSync             *SyncResult
	CreatedAt, UpdatedAt time.Time
}

func shown(row db.Integration) (Integration, error) {
	out := Integration{Kind: row.Kind, Enabled: row.Enabled, HasSecret: len(row.SecretEnc) > 0, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt}
	switch row.Kind {
	case KindGit:
		out.Git = &GitConfig{}
		if err := json.Unmarshal(row.Config, out.Git); err != nil {
			return out, fmt.Errorf("git config: %w", err)
		}
	case KindWebhook:
		out.Webhook = &WebhookConfig{}
		if err := json.Unmarshal(row.Config, out.Webhook); err != nil {
			return out, fmt.Errorf("webhook config: %w", err)
		}
	}
	if len(row.LastTest) > 0 {
		var t TestResult
		if json.Unmarshal(row.LastTest, &t) == nil {
			out.LastTest = &t
		}
	}
	if len(row.LastSync) > 0 {
		var r SyncResult
		if json.Unmarshal(row.LastSync, &r) == nil {
			out.LastSync = &r
		}
	}
	return out, nil
}

// NotFound is the error of a kind the project has no integration of.
func NotFound(kind string) error {
	return apierr.New(apierr.NotFound, "the project has no "+kind+" integration", "configure it with PUT /api/projects/{slug}/integrations/"+kind)
}

func get(ctx context.Context, q *db.Queries, projectID uuid.UUID, kind string) (db.Integration, error) {
	row, err := q.GetIntegration(ctx, db.GetIntegrationParams{ProjectID: projectID, Kind: kind})
	if store.IsNotFound(err) {
		return row, NotFound(kind)
	}
	return row, err
}

// List lists a project's integrations by kind: those after after, Limit+1 at most.
func (s *Service) List(ctx context.Context, projectID uuid.UUID, after *string, limit int) ([]Integration, error) {
	rows, err := s.st.ListIntegrations(ctx, db.ListIntegrationsParams{ProjectID: projectID, AfterKind: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := make([]Integration, 0, len(rows))
	for _, row := range rows {
		in, err := shown(row)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// Get returns the project's integration of kind (NotFound when there is none).
func (s *Service) Get(ctx context.Context, projectID uuid.UUID, kind string) (Integration, error) {
	row, err := get(ctx, s.st.Queries, projectID, kind)
	if err != nil {
		return Integration{}, err
	}
	return shown(row)
}

// Put is a new configuration of an integration: Git for kind git, Webhook for kind webhook.
// Secret nil keeps the stored secret, "" removes it.
type Put struct {
	Kind    string
	Enabled bool
	Git     *GitConfig
	Webhook *WebhookConfig
	Secret  *string
}

// Put creates or replaces an integration, its secret sealed; created tells which. A Git URL the
// egress policy refuses, a webhook URL that is not absolute http(s) and token or ssh
// authentication without a secret are refused.
func (s *Service) Put(ctx context.Context, p Project, in Put) (out Integration, created bool, err error) {
	var raw []byte
	secret := in.Secret
	switch in.Kind {
	case KindGit:
		if err := s.git.CheckURL(in.Git.URL); err != nil {
			return out, false, apierr.New(apierr.ValidationFailed, "the repository URL cannot be used", "body member /git/url: "+err.Error())
		}
		if in.Git.AuthMethod == "none" {
			secret = new(string)
		}
		raw, _ = json.Marshal(in.Git)
	default:
		if u, err := url.Parse(in.Webhook.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return out, false, apierr.New(apierr.ValidationFailed, "the webhook URL cannot be used", "body member /webhook/url: an absolute http or https URL")
		}
		raw, _ = json.Marshal(in.Webhook)
	}
	var row db.UpsertIntegrationRow
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		var enc []byte
		old, err := q.GetIntegration(ctx, db.GetIntegrationParams{ProjectID: p.ID, Kind: in.Kind})
		switch {
		case err == nil:
			enc = old.SecretEnc
		case !store.IsNotFound(err):
			return err
		}
		if secret != nil {
			enc = nil
			if *secret != "" {
				if enc, err = s.box.Seal([]byte(*secret), SecretAD(p.ID, in.Kind)); err != nil {
					return err
				}
			}
		}
		if in.Kind == KindGit && in.Git.AuthMethod != "none" && len(enc) == 0 {
			return apierr.New(apierr.ValidationFailed, "token and ssh authentication need a secret", "body member /git/auth/secret: the token or private key")
		}
		row, err = q.UpsertIntegration(ctx, db.UpsertIntegrationParams{ProjectID: p.ID, Kind: in.Kind, Enabled: in.Enabled, Config: raw, SecretEnc: enc})
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "integration", Name: p.Slug + "/" + in.Kind}, map[string]any{"enabled": in.Enabled, "secretChanged": in.Secret != nil})
	})
	if err != nil {
		return out, false, err
	}
	out, err = shown(db.Integration{ProjectID: row.ProjectID, Kind: row.Kind, Enabled: row.Enabled, Config: row.Config, SecretEnc: row.SecretEnc,
		LastTest: row.LastTest, LastSync: row.LastSync, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt})
	return out, row.Inserted, err
}

// Delete removes the project's integration of kind (NotFound when there is none).
func (s *Service) Delete(ctx context.Context, p Project, kind string) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		n, err := q.DeleteIntegration(ctx, db.DeleteIntegrationParams{ProjectID: p.ID, Kind: kind})
		if err != nil {
			return err
		}
		if n == 0 {
			return NotFound(kind)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "integration", Name: p.Slug + "/" + kind}, nil)
	})
}

// Test checks connectivity (Git: the branch on the remote; webhook: a ping delivery), stores
// the outcome as the last test and returns it; the error met is in the result, not returned.
func (s *Service) Test(ctx context.Context, p Project, kind string) (TestResult, error) {
	row, err := get(ctx, s.st.Queries, p.ID, kind)
	if err != nil {
		return TestResult{}, err
	}
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	start := time.Now()
	switch row.Kind {
	case KindGit:
		var c GitConfig
		if c, err = LoadGit(s.box, row); err == nil {
			err = s.git.Test(tctx, c)
		}
	default:
		var c WebhookConfig
		if c, err = LoadWebhook(s.box, row); err == nil {
			err = s.webhook.Test(tctx, c)
		}
	}
	latency := int(time.Since(start).Milliseconds())
	res := TestResult{Ok: err == nil, LatencyMs: &latency, CheckedAt: time.Now().UTC()}
	if err != nil {
		msg := err.Error()
		res.Error = &msg
	}
	raw, _ := json.Marshal(res)
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		if err := q.SetIntegrationLastTest(ctx, db.SetIntegrationLastTestParams{ProjectID: p.ID, Kind: row.Kind, LastTest: raw}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "integration", Name: p.Slug + "/" + row.Kind}, map[string]any{"ok": res.Ok})
	})
	return res, err
}

// Sync brings the project's features in line with its Git repository (features.Reconcile) and
// stores the outcome as the last sync, in one transaction; a dry run changes nothing but the
// audit log. Only an enabled git integration syncs.
func (s *Service) Sync(ctx context.Context, p Project, kind string, dryRun bool) (SyncResult, error) {
	if kind != KindGit {
		return SyncResult{}, apierr.New(apierr.Conflict, "only a git integration syncs", "path parameter \"kind\": git")
	}
	row, err := get(ctx, s.st.Queries, p.ID, kind)
	if err != nil {
		return SyncResult{}, err
	}
	if !row.Enabled {
		return SyncResult{}, apierr.New(apierr.Conflict, "the git integration is disabled", "enable it with PUT /api/projects/{slug}/integrations/git")
	}
	c, err := LoadGit(s.box, row)
	if err != nil {
		return SyncResult{}, err
	}
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	snap, err := s.git.Fetch(fctx, c)
	if err != nil {
		return SyncResult{}, apierr.Wrap(err, apierr.Conflict, "the repository cannot be read", err.Error()+"; check it with POST /api/projects/{slug}/integrations/git/test")
	}
	commit := snap.Commit
	res := SyncResult{Commit: &commit, DryRun: dryRun}
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		if res.Changes, err = features.Reconcile(ctx, q, p.ID, snap.Files, dryRun); err != nil {
			return err
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
	return res, err
}
