package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

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

// RegisterCleanup adds the periodic clean-up of the server's own tables to reg: login_failures
// rows older than window (the login throttle's window) every CleanupInterval.
func RegisterCleanup(reg *Registry, st *store.Store, window time.Duration) {
	Register(reg, &PruneLoginFailures{Store: st})
	reg.Periodic(CleanupInterval, PruneLoginFailuresArgs{WindowSeconds: int(window.Seconds())})
}
