package livefeed

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Listen keeps one connection of pool LISTENing to channel for as long as ctx lives, calling
// heard with each notification's payload, and reconnects after a failure (a lost notification
// only delays a stream, whose feed polls too). It returns when ctx ends.
func Listen(ctx context.Context, pool *pgxpool.Pool, channel string, log *slog.Logger, heard func(payload string)) {
	for ctx.Err() == nil {
		if err := listenOnce(ctx, pool, channel, heard); err != nil && ctx.Err() == nil {
			log.Warn("livefeed: listener failed; reconnecting", "channel", channel, "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func listenOnce(ctx context.Context, pool *pgxpool.Pool, channel string, heard func(string)) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	defer func() {
		// The connection goes back to the pool: it must not keep listening.
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = conn.Exec(c, "UNLISTEN *")
	}()
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		heard(n.Payload)
	}
}
