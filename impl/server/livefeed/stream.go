package livefeed

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/google/uuid"
)

// Stream writes subject id's events after sequence number after to w as server-sent events: the
// stored history first, then each new event as it is recorded (on any process), with heartbeats
// in between. It returns after the subject's end event, when ctx ends, or when the stream fell too
// far behind (the client resumes with Last-Event-ID). Each call of w.Write is one chunk of whole
// events, meant to be sent at once.
//
// When w has a SetWriteDeadline method (the HTTP handlers' writers), the live batches are written
// by the hub's writers, each batch's shared bytes with one write, bounded by
// Options.WriteTimeout; Stream's goroutine only waits, and writes the history, the heartbeats and
// what waited while it did. Without it, Stream's goroutine writes everything.
func (h *Hub) Stream(ctx context.Context, id uuid.UUID, after int64, w io.Writer) error {
	// busy: until the history is written, the stream's goroutine is the one writing.
	sub := &subscriber{w: w, wake: make(chan struct{}, 1), busy: true}
	sub.idle.L = &sub.mu
	if dl, ok := w.(deadliner); ok {
		sub.dl = dl
	}
	f, unsubscribe := h.subscribe(id, sub)
	st := &stream{h: h, sub: sub, id: id, after: after, mine: true}
	defer st.close(unsubscribe)
	if err := st.write([]byte("retry: 2000\n\n")); err != nil {
		return err
	}
	head, err := h.src.Head(ctx, id)
	if err != nil {
		return err
	}
	// New events come from the feed, which starts (if this stream is its first) after what is
	// stored now, whatever Last-Event-ID this client sent; the history is read by this stream.
	f.seed(head.LastSeq)
	if ended, err := st.catchUp(ctx); ended || err != nil {
		return err
	}
	var grace <-chan time.Time
	if ended, wait, err := st.endedWithoutEvent(&head); ended || err != nil {
		return err
	} else if wait > 0 {
		grace = time.After(wait)
	}
	if done, err := st.release(ctx); done {
		return err
	}
	heartbeat := time.NewTicker(h.heartbeat())
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sub.wake:
			if done, err := st.acquire(); done || err != nil || !st.mine {
				if done {
					return err
				}
				continue
			}
		case <-heartbeat.C:
			if done, err := st.acquire(); done || !st.mine {
				if done {
					return err
				}
				continue // a write is under way: the stream is not idle
			}
			if err := st.write([]byte(": heartbeat\n\n")); err != nil {
				return st.failed(err)
			}
			if ended, _, err := st.endedWithoutEvent(h.head(ctx, id)); ended || err != nil {
				return st.failed(err)
			}
		case <-grace:
			grace = nil
			if done, err := st.acquire(); done || !st.mine {
				if done {
					return err
				}
				grace = time.After(time.Second) // look again once the write under way is over
				continue
			}
			if ended, err := st.catchUp(ctx); ended || err != nil {
				return st.failed(err)
			}
			if ended, _, err := st.endedWithoutEvent(h.head(ctx, id)); ended || err != nil {
				return st.failed(err)
			}
		}
		if done, err := st.release(ctx); done {
			return err
		}
	}
}

// stream is Stream's goroutine's side of a subscriber.
type stream struct {
	h     *Hub
	sub   *subscriber
	id    uuid.UUID
	after int64 // the last event written, while mine
	mine  bool  // this goroutine set sub.busy
	buf   bytes.Buffer
}

// write writes p, bounded by streamWriteTimeout when the writer can be.
func (s *stream) write(p []byte) error {
	if s.sub.dl != nil {
		if err := s.sub.dl.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
			return err
		}
	}
	_, err := s.sub.w.Write(p)
	return err
}

// acquire makes this goroutine the subscriber's writer unless one is writing (mine stays false),
// or reports that the stream is over (done, with the error to return).
func (s *stream) acquire() (done bool, err error) {
	s.sub.mu.Lock()
	defer s.sub.mu.Unlock()
	if s.sub.over != running {
		return true, s.overErr()
	}
	if s.sub.busy {
		return false, nil
	}
	s.sub.busy, s.mine, s.after = true, true, s.sub.after
	return false, nil
}

// overErr is what Stream returns for the subscriber's state (sub.mu held).
func (s *stream) overErr() error {
	if s.sub.over == overFailed {
		return s.sub.err
	}
	return nil // ended, or dropped: the client resumes after the last id it has
}

// failed ends the stream after this goroutine's write or read: err, or nil when it ended.
func (s *stream) failed(err error) error {
	s.sub.mu.Lock()
	defer s.sub.mu.Unlock()
	if s.sub.over == running {
		s.sub.over = overEnded
		if err != nil {
			s.sub.over = overFailed
			if errors.Is(err, os.ErrDeadlineExceeded) {
				s.sub.over = overDropped
				s.h.drops.Add(1)
			}
		}
	}
	return err
}

// release writes what waited while this goroutine wrote, then hands the subscriber back to the
// hub's writers, in step with the feed. done: the stream is over (err is what Stream returns).
func (s *stream) release(ctx context.Context) (done bool, err error) {
	for {
		s.sub.mu.Lock()
		if s.sub.over != running {
			err := s.overErr()
			s.sub.mu.Unlock()
			return true, err
		}
		if len(s.sub.pending) == 0 {
			s.sub.after, s.sub.busy, s.sub.live, s.mine = s.after, false, true, false
			s.sub.idle.Broadcast()
			s.sub.mu.Unlock()
			return false, nil
		}
		batches := s.sub.pending
		s.sub.pending = nil
		s.sub.mu.Unlock()
		if ended, err := s.writeBatches(ctx, batches); ended || err != nil {
			return true, s.failed(err)
		}
	}
}

// writeBatches writes what this stream has not seen of batches, in one write when it can.
func (s *stream) writeBatches(ctx context.Context, batches []*batch) (ended bool, err error) {
	s.buf.Reset()
	flush := func() error {
		if s.buf.Len() == 0 {
			return nil
		}
		err := s.write(s.buf.Bytes())
		s.buf.Reset()
		return err
	}
	for _, b := range batches {
		if b.last() <= s.after {
			if b.ends() {
				return true, flush() // the client is past the subject's end already
			}
			continue
		}
		if b.first() > s.after+1 {
			// Events this stream has not seen came before the feed's batch (the feed started
			// from another stream's history): read them, then go on with the batch.
			if err := flush(); err != nil {
				return false, err
			}
			if done, err := s.catchUp(ctx); done || err != nil {
				return done, err
			}
			if b.last() <= s.after {
				continue
			}
		}
		text, last, end := b.from(s.after)
		if len(batches) == 1 {
			if err := s.write(text); err != nil {
				return false, err
			}
		} else {
			s.buf.Write(text)
		}
		s.after = last
		if end {
			return true, flush()
		}
	}
	return false, flush()
}

// close ends the subscription: once no hub writer writes to the stream any more, Stream may
// return (its writer is the handler's, invalid after it returns).
func (s *stream) close(unsubscribe func()) {
	unsubscribe()
	s.sub.mu.Lock()
	if s.sub.over == running {
		s.sub.over = overClosed
	}
	if s.mine {
		s.sub.busy, s.mine = false, false
	}
	for s.sub.busy {
		s.sub.idle.Wait()
	}
	s.sub.pending = nil
	s.sub.mu.Unlock()
	if s.sub.dl != nil {
		_ = s.sub.dl.SetWriteDeadline(time.Time{}) // what follows the stream, if anything, is not bounded
	}
}

// head reads the subject's head, or returns nil when it cannot be read now.
func (h *Hub) head(ctx context.Context, id uuid.UUID) *Head {
	hd, err := h.src.Head(ctx, id)
	if err != nil {
		return nil
	}
	return &hd
}

// catchUp writes the stored events after s.after, a page per write, moving s.after; it reports
// whether it wrote the end event.
func (s *stream) catchUp(ctx context.Context) (bool, error) {
	for {
		events, err := s.h.src.Events(ctx, s.id, s.after, page)
		if err != nil || len(events) == 0 {
			return false, err
		}
		b := newBatch(events)
		text, last, end := b.from(s.after)
		if err := s.write(text); err != nil {
			return false, err
		}
		s.after = last
		if end {
			return true, nil
		}
		if len(events) < int(page) {
			return false, nil
		}
	}
}

// endedWithoutEvent ends the stream of a subject that is over but has no end event to send (see
// Head). A subject that has just ended gets wait (> 0) to let its stored end event arrive first.
func (s *stream) endedWithoutEvent(h *Head) (bool, time.Duration, error) {
	if h == nil || !h.Over || h.End == nil || h.LastSeq > s.after {
		return false, 0, nil // not readable now, not over, or more to come: the next heartbeat looks again
	}
	if h.EndWait > 0 {
		return false, h.EndWait, nil
	}
	return true, 0, s.write(h.End(s.after + 1))
}
