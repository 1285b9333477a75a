package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/store"
)

// CleanupInterval is how often the periodic clean-up jobs run.
const CleanupInterval = time.Hour

// PruneLoginFailuresArgs is the periodic job that deletes the login-throttling rows that count
// nothing any more: those whose window (Window) and lock have both ended. Without it
// login_failures grows by one row per key (account, client address) that ever failed to log in.
type PruneLoginFailuresArgs struct {
	WindowSeconds int `json:"window_seconds"`
}

// Kind names the job in river_job.
func (PruneLoginFailuresArgs) Kind() string { return "prune_login_failures" }

// PruneLoginFailures deletes those rows; a key's next failure starts a fresh count whether its row
// is there or not, so deleting them changes no throttling decision.
type PruneLoginFailures struct {
	river.WorkerDefaults[PruneLoginFailuresArgs]
	Store *store.Store
}

// Work deletes the rows.
func (w *PruneLoginFailures) Work(ctx context.Context, j *river.Job[PruneLoginFailuresArgs]) error {
	_, err := w.Store.PruneLoginFailures(ctx, int32(j.Args.WindowSeconds))
	return err
}

// PruneBlobsArgs is the periodic job that deletes content of the blob store that no row references
// (datasets, artifacts, visual baselines: store.CountBlobReferences) and that was last written more
// than GraceSeconds ago. Such content is left by a transaction that failed after its Put, or by
// a process that died in between. The grace spares content whose writer has not committed yet.
type PruneBlobsArgs struct {
	GraceSeconds int `json:"grace_seconds"`
}

// Kind names the job in river_job.
func (PruneBlobsArgs) Kind() string { return "prune_blobs" }

// PruneBlobs deletes that content, each key under its advisory lock (store.KeepBlob), so a writer
// that references the key meanwhile either keeps it or puts it back. A blob store that cannot list
// its content (not a blob.Lister) is left alone.
type PruneBlobs struct {
	river.WorkerDefaults[PruneBlobsArgs]
	Store *store.Store
	Blobs blob.Store
}

// Timeout allows a large store's walk.
func (w *PruneBlobs) Timeout(*river.Job[PruneBlobsArgs]) time.Duration { return 30 * time.Minute }

// Work lists the store and deletes what is old enough and unreferenced.
func (w *PruneBlobs) Work(ctx context.Context, j *river.Job[PruneBlobsArgs]) error {
	lister, ok := w.Blobs.(blob.Lister)
	if !ok {
		return nil
	}
	before := time.Now().Add(-time.Duration(j.Args.GraceSeconds) * time.Second)
	var old []string
	if err := lister.List(ctx, func(key string, written time.Time) error {
		if written.Before(before) {
			old = append(old, key)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, key := range old {
		if _, err := w.Store.DeleteBlobIfUnreferenced(ctx, w.Blobs, key); err != nil {
			return err
		}
	}
	return nil
}

// PruneSessionsArgs is the periodic job that deletes browser sessions whose expiry has passed.
// An expired session already authenticates nothing (the session check compares expires_at), but
// its row would stay forever with the user agent and client address it recorded.
type PruneSessionsArgs struct{}

// Kind names the job in river_job.
func (PruneSessionsArgs) Kind() string { return "prune_sessions" }

// PruneSessions deletes those rows.
type PruneSessions struct {
	river.WorkerDefaults[PruneSessionsArgs]
	Store *store.Store
}

// Work deletes the expired sessions.
func (w *PruneSessions) Work(ctx context.Context, _ *river.Job[PruneSessionsArgs]) error {
	_, err := w.Store.DeleteExpiredSessions(ctx)
	return err
}

// Cleanup configures the periodic clean-up.
type Cleanup struct {
	// LoginWindow is the login throttle's window (identity.Throttle.Window).
	LoginWindow time.Duration
	// BlobGrace is how long unreferenced content is kept after it was written (default 24h).
	BlobGrace time.Duration
}

// RegisterCleanup adds the periodic clean-up to reg, each job every CleanupInterval and at start:
// login_failures rows that count nothing any more, expired sessions, and blobs nothing references.
func RegisterCleanup(reg *Registry, st *store.Store, blobs blob.Store, c Cleanup) {
	if c.BlobGrace <= 0 {
		c.BlobGrace = 24 * time.Hour
	}
	Register(reg, &PruneLoginFailures{Store: st})
	reg.Periodic(CleanupInterval, PruneLoginFailuresArgs{WindowSeconds: int(c.LoginWindow.Seconds())})
	Register(reg, &PruneSessions{Store: st})
	reg.Periodic(CleanupInterval, PruneSessionsArgs{})
	Register(reg, &PruneBlobs{Store: st, Blobs: blobs})
	reg.Periodic(CleanupInterval, PruneBlobsArgs{GraceSeconds: int(c.BlobGrace.Seconds())})
}
