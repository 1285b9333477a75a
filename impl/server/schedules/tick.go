package schedules

import (
	"context"
	"time"
)

// tickOffset is how long after a second turns the tick fires, so that a firing due at a whole
// second is seen by the tick right after it.
const tickOffset = 20 * time.Millisecond

// Start runs the scheduler's tick until ctx ends: FireDue just after every second turns. Every
// process runs one; the firing rows make them agree. The returned function waits for it to stop.
func (s *Service) Start(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			now := time.Now()
			timer := time.NewTimer(now.Truncate(time.Second).Add(time.Second + tickOffset).Sub(now))
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			if _, err := s.FireDue(ctx, s.cfg.Now()); err != nil && ctx.Err() == nil {
				s.log.Error("scheduler tick", "err", err)
			}
		}
	}()
	return func() { <-done }
}
