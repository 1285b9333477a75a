package httpapi

import "io"

// eofOnClose reads a pipe whose writer may end with an error (the client went away, the server
// stops) as a stream that simply ends: the response is already under way, so there is no error
// left to report.
type eofOnClose struct{ r *io.PipeReader }

func (e eofOnClose) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		err = io.EOF
	}
	return n, err
}

func (e eofOnClose) Close() error { return e.r.Close() }
