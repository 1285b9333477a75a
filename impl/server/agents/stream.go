package agents

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// HeartbeatEvery is how often an idle event stream sends a comment line.
var HeartbeatEvery = 15 * time.Second

// Stream writes a job's events after sequence after to w as server-sent events: the stored
// history first, then each new event as it is recorded on any process; it returns after the end
// event, or when ctx ends.
func (s *Service) Stream(ctx context.Context, job uuid.UUID, after int64, w io.Writer) error {
	signal, unsubscribe := s.hub.subscribe(job)
	defer unsubscribe()
	heartbeat := time.NewTicker(HeartbeatEvery)
	defer heartbeat.Stop()
	if _, err := io.WriteString(w, "retry: 2000\n\n"); err != nil {
		return err
	}
	for {
		events, err := s.st.ListAgentJobEvents(ctx, db.ListAgentJobEventsParams{JobID: job, Seq: after, RowLimit: 500})
		if err != nil {
			return err
		}
		for _, e := range events {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, e.Data); err != nil {
				return err
			}
			after = e.Seq
			if e.Type == "end" {
				return nil
			}
		}
		if len(events) == 500 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-signal:
		case <-heartbeat.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return err
			}
		case <-time.After(time.Second): // a lost notification only delays an event
		}
	}
}

// Start listens for the job events of every process until ctx ends.
func (s *Service) Start(ctx context.Context) {
	go func() {
		for ctx.Err() == nil {
			if err := s.listenOnce(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("agents: listener failed; reconnecting", "error", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}()
}

func (s *Service) listenOnce(ctx context.Context) error {
	conn, err := s.st.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN sdods_agent_events"); err != nil {
		return err
	}
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = conn.Exec(c, "UNLISTEN *")
	}()
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if id, err := uuid.Parse(n.Payload); err == nil {
			s.hub.publish(id)
		}
	}
}

// hub fans this process's notifications out to the streams it serves.
type hub struct {
	mu   sync.Mutex
	subs map[uuid.UUID]map[chan struct{}]struct{}
}

func newHub() *hub { return &hub{subs: map[uuid.UUID]map[chan struct{}]struct{}{}} }

func (h *hub) subscribe(id uuid.UUID) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[id] == nil {
		h.subs[id] = map[chan struct{}]struct{}{}
	}
	h.subs[id][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[id], ch)
		if len(h.subs[id]) == 0 {
			delete(h.subs, id)
		}
		h.mu.Unlock()
	}
}

func (h *hub) publish(id uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
