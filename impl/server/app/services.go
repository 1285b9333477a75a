package app

import (
	"log/slog"

	"github.com/sdods/sdods/impl/server/artifacts"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/health"
	"github.com/sdods/sdods/impl/server/hierarchy"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/ingest"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/pool"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/stats"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/tracing"
	"github.com/sdods/sdods/impl/server/visual"
)

// serviceDeps are what the domain services are built from.
type serviceDeps struct {
	Store   *store.Store
	Secrets *secrets.Box
	Steps   features.Library
	Git     integrations.Git
	Webhook integrations.Webhook
	Blobs   blob.Store
	Log     *slog.Logger
}

// newServices wires the domain services behind the HTTP handlers (and, later, the MCP tools and
// jobs): the one place that constructs them.
func newServices(d serviceDeps) httpapi.Services {
	return httpapi.Services{
		Hierarchy:    hierarchy.New(d.Store),
		Projects:     projects.NewService(d.Store),
		Features:     features.NewService(d.Store, d.Steps),
		Integrations: integrations.NewService(d.Store, d.Secrets, d.Git, d.Webhook),
		Pool:         pool.NewService(d.Store, d.Secrets),
		Environments: projects.NewEnvironments(d.Store, d.Secrets),
		Datasets:     projects.NewDatasets(d.Store, d.Blobs, d.Log),
		AuditLog:     audit.NewLog(d.Store.Queries),
		Visual:       visual.NewService(d.Store),
		Artifacts:    artifacts.NewService(d.Store, d.Blobs),
		Health:       health.NewService(d.Store),
		Stats:        stats.New(d.Store),
		Quarantines:  stats.NewQuarantines(d.Store),
		Reports:      reports.NewService(d.Store, d.Blobs, d.Log),
		Tracing:      tracing.NewService(d.Store, d.Blobs),
		Ingest:       ingest.NewService(d.Store, d.Blobs),
	}
}
