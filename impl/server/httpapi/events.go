package httpapi

import (
	"context"
	"io"
	"net/http"
	"time"
)

// sseStream answers with a stream of server-sent events written straight to the connection:
// each Write of the stream is flushed at once, so live events leave with no copy and no extra
// goroutine per subscriber (issue 31).
type sseStream struct {
	ctx    context.Context
	stream func(ctx context.Context, w io.Writer) error
}

// VisitStreamAgentJobEventsResponse writes an agent job's stream, as VisitStreamRunEventsResponse.
func (s sseStream) VisitStreamAgentJobEventsResponse(w http.ResponseWriter) error {
	return s.VisitStreamRunEventsResponse(w)
}

// VisitStreamRunEventsResponse writes the headers, then the stream, each write flushed.
//
// Over HTTP/1.1 the body is not chunked: "Transfer-Encoding: identity" makes net/http send the
// stream's bytes as they are and close the connection after the stream (the setup the
// server-sent events specification recommends; the response says "Connection: close" and has no
// Content-Length, so clients, proxies and EventSource read it to the connection's end). A batch of
// events is then one write system call per subscriber — the shared bytes, no chunk header and
// trailer around them. HTTP/2 has no chunked encoding and drops the header.
//
// The writer handed to the stream can bound its writes (SetWriteDeadline), which lets the live
// feed's writers write to it with a deadline instead of this goroutine (impl/server/livefeed).
func (s sseStream) VisitStreamRunEventsResponse(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	h.Set("Transfer-Encoding", "identity")
	w.WriteHeader(http.StatusOK)
	fw := flushWriter{w: w, rc: http.NewResponseController(w)}
	if err := fw.rc.Flush(); err != nil {
		return nil // the client left
	}
	var sw io.Writer = fw
	if fw.rc.SetWriteDeadline(time.Time{}) == nil {
		sw = deadlineWriter{fw}
	}
	// The stream ends when the run ends, the client leaves or the stream fell behind: every
	// case ends the response normally (an error here could only be logged after the status).
	_ = s.stream(s.ctx, sw)
	return nil
}

type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil {
		return n, err
	}
	return n, f.rc.Flush()
}

// deadlineWriter is a flushWriter whose connection (HTTP/1) or stream (HTTP/2) takes write
// deadlines.
type deadlineWriter struct{ flushWriter }

func (d deadlineWriter) SetWriteDeadline(t time.Time) error { return d.rc.SetWriteDeadline(t) }
