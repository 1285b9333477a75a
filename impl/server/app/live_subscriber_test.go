package app_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestLiveSubscriberProcess is the subscriber process of BenchmarkLiveEvents: it opens
// SDODS_LIVE_CLIENT_N streams of SDODS_LIVE_CLIENT_URL, prints "ready" once every one is open,
// reads each to its end event and prints what it measured as one JSON line (liveResult). Without
// those variables (in a plain go test run) it has nothing to do.
//
// It is a load generator on the server's machine, so it must cost far less per delivered event
// than the server's fan-out (one write per subscriber per batch), or what the benchmark measures is
// this process (docs/benchmarks.md, "Live events", session 13). Each stream is a raw HTTP/1.1
// connection (the stream is unchunked and ends with the connection) read in 32 KB reads into a
// buffer of its own: per read one clock reading and one mark (the last event the read completed),
// per event a scan of its lines for its id and type, and nothing allocated. The lag of each event
// is computed after the run from those marks, from the commits heard on a LISTEN connection and
// from one copy of the run's events (their at), read once over the API when the run is over.
func TestLiveSubscriberProcess(t *testing.T) {
	streamURL := os.Getenv("SDODS_LIVE_CLIENT_URL")
	if streamURL == "" {
		t.Skip("run by BenchmarkLiveEvents")
	}
	u, err := url.Parse(streamURL)
	if err != nil || u.Scheme != "http" {
		t.Fatalf("SDODS_LIVE_CLIENT_URL %q: an http URL", streamURL)
	}
	n := envInt("SDODS_LIVE_CLIENT_N", 1)
	token := os.Getenv("SDODS_LIVE_CLIENT_TOKEN")
	parts := strings.Split(u.Path, "/")
	runID := parts[len(parts)-2]
	start := time.Now()

	// The commit of each batch: when its notification reaches this process, on a connection of its
	// own, before any stream opens.
	ctx, stopListening := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, os.Getenv("SDODS_LIVE_CLIENT_DB"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN sdods_run_events"); err != nil {
		t.Fatal(err)
	}
	var commits []commit
	listened := make(chan struct{})
	go func() {
		defer close(listened)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			heard := time.Since(start)
			if id, seq, ok := strings.Cut(n.Payload, ":"); ok && id == runID {
				if last, err := strconv.ParseInt(seq, 10, 64); err == nil {
					commits = append(commits, commit{last, heard})
				}
			}
		}
	}()

	streams := make([]*liveStream, n)
	var open, done sync.WaitGroup
	open.Add(n)
	done.Add(n)
	for i := range streams {
		s := &liveStream{addr: u.Host, path: u.RequestURI(), token: token, start: start, buf: make([]byte, liveReadSize)}
		streams[i] = s
		go func() {
			defer done.Done()
			s.follow(open.Done)
		}()
	}
	open.Wait()
	readyCPU := cpuNow()
	if file := os.Getenv("SDODS_LIVE_CLIENT_PROFILE"); file != "" {
		// The reading's CPU profile (the benchmark's -cpuprofile is the API process's).
		f, err := os.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("ready")
	done.Wait()
	pprof.StopCPUProfile()
	res := liveResult{Subscribers: n, ReadyCPU: readyCPU, CPU: cpuNow()}
	stopListening()
	<-listened

	// One copy of the run's events, read once now that the run is over: each event's at, by
	// sequence number (1, 2, … with no gap).
	ats, err := runEventTimes(streamURL, token)
	if err != nil {
		t.Fatal(err)
	}
	storedLast := int64(len(ats) - 1)
	// Each event's commit: the first notified batch whose last sequence number is at least its own.
	slices.SortFunc(commits, func(a, b commit) int { return cmp.Compare(a.last, b.last) })
	res.Batches = len(commits)
	committed := make([]time.Duration, len(ats))
	k := 0
	for seq := range committed {
		for k < len(commits) && commits[k].last < int64(seq) {
			k++
		}
		committed[seq] = -1
		if k < len(commits) {
			committed[seq] = commits[k].at
		}
	}
	var fromAt, fromCommit []time.Duration
	for i, s := range streams {
		if s.err != nil {
			t.Errorf("subscriber %d: %v", i, s.err)
		}
		if s.ended {
			res.Ended++
		}
		if s.storedEnd {
			res.StoredEnds++
		}
		if s.last == storedLast && s.err == nil {
			res.Complete++ // in order with no gap (follow checks each), so every stored event
		}
		res.Events += s.events
		res.Reads += s.reads
		res.Resumes += s.resumes
		prev := int64(0)
		for _, m := range s.marks {
			arrived := start.Add(m.at)
			for seq := prev + 1; seq <= m.last && seq <= storedLast; seq++ {
				fromAt = append(fromAt, arrived.Sub(ats[seq]))
				if c := committed[seq]; c >= 0 {
					fromCommit = append(fromCommit, m.at-c)
				}
			}
			prev = m.last
		}
	}
	res.P50, res.P99, res.Max = quantiles(fromAt)
	res.CommitP50, res.CommitP99, res.CommitMax = quantiles(fromCommit)
	line, _ := json.Marshal(res)
	fmt.Println(string(line))
}

// commit is when a batch's notification (its last sequence number) reached the subscriber
// process, since the process's start.
type commit struct {
	last int64
	at   time.Duration
}

// liveReadSize is a stream's buffer, the most one read takes: about a hundred events.
const liveReadSize = 32 << 10

// liveStream is one subscriber of TestLiveSubscriberProcess.
type liveStream struct {
	addr, path, token string
	start             time.Time
	buf               []byte

	// The event being read: its id (-1: none yet) and whether it is an end event.
	id  int64
	end bool

	last      int64 // the last event read: events come 1, 2, … in order, and resume after it
	events    int64
	reads     int64
	resumes   int
	marks     []readMark
	ended     bool // an end event came
	storedEnd bool // it was the stored one (it has an id and an at), not one the server made up
	err       error
}

// readMark is a read that completed at least one event's data line: the last one it completed,
// and when the read returned (since the process's start). The events after the previous mark up
// to last arrived then.
type readMark struct {
	last int64
	at   time.Duration
}

// follow reads the stream to its end event, resuming after the last event read (Last-Event-ID)
// when the server drops it; opened is called once the first response's head has arrived.
func (s *liveStream) follow(opened func()) {
	defer func() {
		if opened != nil {
			opened()
		}
	}()
	for try := 0; try < 20 && !s.ended && s.err == nil; try++ {
		if try > 0 {
			s.resumes++
		}
		conn, fill, err := s.connect()
		if opened != nil {
			opened()
			opened = nil
		}
		if err != nil {
			s.err = err
			return
		}
		s.read(conn, fill)
		conn.Close()
	}
	if !s.ended && s.err == nil {
		s.err = fmt.Errorf("no end event after 20 connections (last event %d)", s.last)
	}
}

// connect sends the request and reads the response's head; the body's first bytes, if they came
// with it, are left at the start of s.buf (fill of them).
func (s *liveStream) connect() (net.Conn, int, error) {
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		return nil, 0, err
	}
	req := fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n", s.path, s.addr, s.token)
	if s.last > 0 {
		req = fmt.Appendf(req, "Last-Event-ID: %d\r\n", s.last)
	}
	req = append(req, "\r\n"...)
	if _, err := conn.Write(req); err != nil {
		conn.Close()
		return nil, 0, err
	}
	fill := 0
	for {
		if i := bytes.Index(s.buf[:fill], []byte("\r\n\r\n")); i >= 0 {
			head := string(s.buf[:i])
			fill = copy(s.buf, s.buf[i+4:fill])
			if err := checkStreamHead(head); err != nil {
				conn.Close()
				return nil, 0, err
			}
			return conn, fill, nil
		}
		if fill == len(s.buf) {
			conn.Close()
			return nil, 0, fmt.Errorf("response head over %d bytes", len(s.buf))
		}
		k, err := conn.Read(s.buf[fill:])
		fill += k
		if err != nil && k == 0 {
			conn.Close()
			return nil, 0, fmt.Errorf("response head: %w", err)
		}
	}
}

// checkStreamHead accepts what this reader can read: a 200 event stream over HTTP/1.1 whose body
// is the connection's bytes to its end (not chunked).
func checkStreamHead(head string) error {
	lines := strings.Split(head, "\r\n")
	if !strings.HasPrefix(lines[0], "HTTP/1.1 200 ") {
		return fmt.Errorf("response %q", lines[0])
	}
	eventStream := false
	for _, l := range lines[1:] {
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimSpace(value)
		switch strings.ToLower(name) {
		case "transfer-encoding", "content-length":
			return fmt.Errorf("a stream with %s (the stream is sent as it is, to the connection's end)", l)
		case "content-type":
			eventStream = strings.HasPrefix(value, "text/event-stream")
		}
	}
	if !eventStream {
		return fmt.Errorf("not an event stream: %q", head)
	}
	return nil
}

// read reads events from conn until the end event, an error or the connection's end (the server
// dropped the stream); s.buf[:fill] holds what came with the response's head.
func (s *liveStream) read(conn net.Conn, fill int) {
	s.id, s.end = -1, false
	at := time.Since(s.start)
	for {
		completed := false
		pos := 0
		for !s.ended && s.err == nil {
			nl := bytes.IndexByte(s.buf[pos:fill], '\n')
			if nl < 0 {
				break
			}
			completed = s.line(s.buf[pos:pos+nl]) || completed
			pos += nl + 1
		}
		if completed {
			s.marks = append(s.marks, readMark{s.last, at})
		}
		if s.ended || s.err != nil {
			return
		}
		fill = copy(s.buf, s.buf[pos:fill])
		if fill == len(s.buf) {
			s.buf = slices.Grow(s.buf, len(s.buf))[:2*len(s.buf)] // a line longer than the buffer
		}
		k, err := conn.Read(s.buf[fill:])
		at = time.Since(s.start)
		s.reads++
		fill += k
		if err != nil && k == 0 {
			return // dropped (or failed): follow resumes after s.last
		}
	}
}

// line takes one line of the stream, reporting whether it completed an event (its data line).
func (s *liveStream) line(l []byte) bool {
	switch {
	case len(l) == 0: // the end of an event
		s.id, s.end = -1, false
	case bytes.HasPrefix(l, []byte("data: ")):
		if s.id < 0 {
			// Only an end the server makes up has no id (a run over without its stored end: the
			// fan-out regression of issue 31).
			s.ended = s.end
			return false
		}
		if s.id != s.last+1 {
			s.err = fmt.Errorf("event %d after event %d", s.id, s.last)
			return false
		}
		s.last, s.events = s.id, s.events+1
		if s.end {
			s.ended, s.storedEnd = true, bytes.Contains(l, []byte(`"at":"`))
		}
		return true
	case bytes.HasPrefix(l, []byte("id: ")):
		s.id = 0
		for _, c := range l[4:] {
			if c < '0' || c > '9' || s.id > 1<<50 {
				s.err = fmt.Errorf("id line %q", l)
				return false
			}
			s.id = s.id*10 + int64(c-'0')
		}
	case bytes.Equal(l, []byte("event: end")):
		s.end = true
	}
	return false
}

// runEventTimes reads the stream of a run that is over, once, and returns each event's at by
// sequence number (index 0 unused); the events must come 1, 2, … and end with the stored end.
func runEventTimes(streamURL, token string) ([]time.Time, error) {
	req, _ := http.NewRequest("GET", streamURL, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	ats := []time.Time{{}}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var e struct {
			Type     string    `json:"type"`
			Sequence int64     `json:"sequence"`
			At       time.Time `json:"at"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, err
		}
		if e.Sequence != int64(len(ats)) {
			return nil, fmt.Errorf("the run's events: %d after %d", e.Sequence, len(ats)-1)
		}
		ats = append(ats, e.At)
		if e.Type == "end" {
			return ats, nil
		}
	}
	return nil, fmt.Errorf("the run's events: no stored end after %d (%v)", len(ats)-1, sc.Err())
}

// quantiles returns the median, the 99th percentile and the maximum of d (sorted in place).
func quantiles(d []time.Duration) (p50, p99, top time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*99/100], d[len(d)-1]
}
