package httpapi

import (
	"context"
	"io"
	"net/http"
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
func (s sseStream) VisitStreamRunEventsResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	fw := flushWriter{w: w, rc: http.NewResponseController(w)}
	if err := fw.rc.Flush(); err != nil {
		return nil // the client left
	}
	// The stream ends when the run ends, the client leaves or the stream fell behind: every
	// case ends the response normally (an error here could only be logged after the status).
	_ = s.stream(s.ctx, fw)
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
