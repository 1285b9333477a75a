package livefeed

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/google/uuid"
)

// Stream writes subject id's events after sequence number after to w as server-sent events: the
// stored history first, then each new event as it is recorded (on any process), with heartbeats
// in between. It returns after the subject's end event, when ctx ends, or when the stream fell too
// far behind (the client resumes with Last-Event-ID). Each call of w.Write is one chunk of whole
// events, meant to be flushed.
func (h *Hub) Stream(ctx context.Context, id uuid.UUID, after int64, w io.Writer) error {
	sub, f, unsubscribe := h.subscribe(id)
	defer unsubscribe()
	if _, err := io.WriteString(w, "retry: 2000\n\n"); err != nil {
		return err
	}
	head, err := h.src.Head(ctx, id)
	if err != nil {
		return err
	}
	// New events come from the feed, which starts (if this stream is its first) after what is
	// stored now, whatever Last-Event-ID this client sent; the history is read by this stream.
	f.seed(head.LastSeq)
	if ended, err := h.catchUp(ctx, id, &after, w); ended || err != nil {
		return err
	}
	var grace <-chan time.Time
	if ended, wait, err := endedWithoutEvent(&head, after, w); ended || err != nil {
		return err
	} else if wait > 0 {
		grace = time.After(wait)
	}
	heartbeat := time.NewTicker(h.heartbeat())
	defer heartbeat.Stop()
	var buf bytes.Buffer
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case b, ok := <-sub.ch:
			if !ok {
				return nil // dropped for being slow: the client resumes after the last id it has
			}
			// Whatever else is already waiting goes out in the same write.
			batches := []*batch{b}
			for more := true; more; {
				select {
				case b, ok := <-sub.ch:
					if !ok {
						more = false
						break
					}
					batches = append(batches, b)
				default:
					more = false
				}
			}
			buf.Reset()
			ended := false
			for _, b := range batches {
				if b.last() <= after {
					if b.frames[len(b.frames)-1].end {
						ended = true // the client is past the subject's end already
						break
					}
					continue
				}
				if b.first() > after+1 {
					// Events this stream has not seen came before the feed's batch (the feed started
					// from another stream's history): read them, then go on with the batch.
					if buf.Len() > 0 {
						if _, err := w.Write(buf.Bytes()); err != nil {
							return err
						}
						buf.Reset()
					}
					if done, err := h.catchUp(ctx, id, &after, w); done || err != nil {
						return err
					}
					if b.last() <= after {
						continue
					}
				}
				if b.first() == after+1 && buf.Len() == 0 && len(batches) == 1 {
					if _, err := w.Write(b.all); err != nil {
						return err
					}
				} else {
					for _, fr := range b.frames {
						if fr.seq > after {
							buf.Write(fr.text)
						}
					}
				}
				after = b.last()
				if b.frames[len(b.frames)-1].end {
					ended = true
					break
				}
			}
			if buf.Len() > 0 {
				if _, err := w.Write(buf.Bytes()); err != nil {
					return err
				}
			}
			if ended {
				return nil
			}
		case <-heartbeat.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return err
			}
			if ended, _, err := endedWithoutEvent(h.head(ctx, id), after, w); ended || err != nil {
				return err
			}
		case <-grace:
			grace = nil
			if ended, err := h.catchUp(ctx, id, &after, w); ended || err != nil {
				return err
			}
			if ended, _, err := endedWithoutEvent(h.head(ctx, id), after, w); ended || err != nil {
				return err
			}
		}
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

// catchUp writes the stored events after *after, a page per write, moving *after; it reports
// whether it wrote the end event.
func (h *Hub) catchUp(ctx context.Context, id uuid.UUID, after *int64, w io.Writer) (bool, error) {
	for {
		events, err := h.src.Events(ctx, id, *after, page)
		if err != nil || len(events) == 0 {
			return false, err
		}
		b := newBatch(events)
		end := -1
		for i, fr := range b.frames {
			if fr.end {
				end = i
				break
			}
		}
		if end >= 0 {
			n := 0 // the batch up to its end event
			for _, fr := range b.frames[:end+1] {
				n += len(fr.text)
			}
			b.all = b.all[:n]
		}
		if _, err := w.Write(b.all); err != nil {
			return false, err
		}
		if end >= 0 {
			*after = b.frames[end].seq
			return true, nil
		}
		*after = b.last()
		if len(events) < int(page) {
			return false, nil
		}
	}
}

// endedWithoutEvent ends the stream of a subject that is over but has no end event to send (see
// Head). A subject that has just ended gets wait (> 0) to let its stored end event arrive first.
func endedWithoutEvent(h *Head, after int64, w io.Writer) (bool, time.Duration, error) {
	if h == nil || !h.Over || h.End == nil || h.LastSeq > after {
		return false, 0, nil // not readable now, not over, or more to come: the next heartbeat looks again
	}
	if h.EndWait > 0 {
		return false, h.EndWait, nil
	}
	_, err := w.Write(h.End(after + 1))
	return true, 0, err
}
