package app_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
// connection (the stream is unchunked and ends with the connection), read by an epoll loop per
// processor with one read system call of up to 32 KB per stream that has bytes; per read one clock
// reading and, when it completed events, one mark (the last event it completed); per event a scan
// of its lines for its id and type; nothing allocated. Each event's lag is computed after the run
// from those marks, from the commits heard on a LISTEN connection and from one copy of the run's
// events (their at), read once over the API when the run is over.
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

	addr, err := net.ResolveTCPAddr("tcp4", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	// The streams are opened one after the other (each connection, request and response head
	// with blocking system calls), then read by one loop per processor of this process.
	loops := make([]*liveLoop, runtime.GOMAXPROCS(0))
	for i := range loops {
		if loops[i], err = newLiveLoop(); err != nil {
			t.Fatal(err)
		}
	}
	streams := make([]*liveStream, n)
	for i := range streams {
		s := &liveStream{addr: addr, host: u.Host, path: u.RequestURI(), token: token, start: start, buf: make([]byte, liveReadSize)}
		streams[i] = s
		l := loops[i%len(loops)]
		if err := l.open(s); err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}
	}
	var done sync.WaitGroup
	for _, l := range loops {
		done.Go(l.run)
	}
	readyUser, readySystem := cpuSplit()
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
	user, system := cpuSplit()
	res := liveResult{Subscribers: n, ReadyCPU: readyUser + readySystem, CPU: user + system, ReadingSystem: system - readySystem}
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
			res.Complete++ // in order with no gap (line checks each), so every stored event
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

// liveGather is how long a read loop waits when fewer than liveGatherBelow of its streams (and
// fewer than half) had bytes: a millisecond at most added to a lag, against a wake-up per stream
// per batch.
const (
	liveGather      = time.Millisecond
	liveGatherBelow = 64
)

// liveReadSize is a stream's buffer, the most one read takes: about a hundred events.
const liveReadSize = 32 << 10

// liveStream is one subscriber of TestLiveSubscriberProcess.
type liveStream struct {
	addr              *net.TCPAddr
	host, path, token string
	start             time.Time
	buf               []byte
	fd                int
	fill              int // s.buf[:fill] is read and not parsed: the start of a line

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

// liveLoop reads its streams as their bytes arrive: one epoll set, one thread, one read system
// call per stream that has bytes (level-triggered: what a read leaves is reported again), none
// of Go's netpoller and goroutine wake-ups in between.
type liveLoop struct {
	epfd    int
	streams map[int]*liveStream // by descriptor
}

func newLiveLoop() (*liveLoop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	return &liveLoop{epfd: epfd, streams: map[int]*liveStream{}}, err
}

// open connects s (or reconnects it after the last event it read) and adds it to the loop.
func (l *liveLoop) open(s *liveStream) error {
	if err := s.connect(); err != nil {
		return err
	}
	l.streams[s.fd] = s
	return syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, s.fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(s.fd)})
}

// run reads the loop's streams until each has read its end event (or failed).
func (l *liveLoop) run() {
	runtime.LockOSThread()
	defer syscall.Close(l.epfd)
	ready := make([]syscall.EpollEvent, 256)
	for len(l.streams) > 0 {
		k, err := syscall.EpollWait(l.epfd, ready, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			for _, s := range l.streams {
				s.err = fmt.Errorf("epoll: %w", err)
			}
			return
		}
		if k < min(liveGatherBelow, len(l.streams)/2) {
			// Few of many streams had bytes: the feed is writing a batch to them one after the
			// other. Waiting a moment lets the rest of its writes arrive, to be read after one
			// wake-up instead of one each (a third of this process's CPU without it).
			time.Sleep(liveGather)
		}
		for _, e := range ready[:k] {
			s := l.streams[int(e.Fd)]
			if s == nil || s.receive() {
				continue
			}
			// Over: ended, failed or dropped by the server (resumed after its last event).
			delete(l.streams, s.fd)
			syscall.Close(s.fd)
			if !s.ended && s.err == nil {
				if s.resumes++; s.resumes > 20 {
					s.err = fmt.Errorf("no end event after %d connections (last event %d)", s.resumes, s.last)
				} else if err := l.open(s); err != nil {
					s.err = err
				}
			}
		}
	}
}

// connect opens a connection, sends the request (after s.last, if any) and reads the response's
// head with blocking system calls, then makes the connection non-blocking; the body's first bytes,
// if they came with the head, are left in s.buf[:s.fill].
func (s *liveStream) connect() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	fail := func(err error) error { syscall.Close(fd); return err }
	sa := &syscall.SockaddrInet4{Port: s.addr.Port}
	copy(sa.Addr[:], s.addr.IP.To4())
	if err := syscall.Connect(fd, sa); err != nil {
		return fail(err)
	}
	req := fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n", s.path, s.host, s.token)
	if s.last > 0 {
		req = fmt.Appendf(req, "Last-Event-ID: %d\r\n", s.last)
	}
	req = append(req, "\r\n"...)
	for len(req) > 0 {
		k, err := syscall.Write(fd, req)
		if err != nil {
			return fail(err)
		}
		req = req[k:]
	}
	fill := 0
	for {
		if i := bytes.Index(s.buf[:fill], []byte("\r\n\r\n")); i >= 0 {
			if err := checkStreamHead(string(s.buf[:i])); err != nil {
				return fail(err)
			}
			s.fill = copy(s.buf, s.buf[i+4:fill])
			break
		}
		if fill == len(s.buf) {
			return fail(fmt.Errorf("response head over %d bytes", len(s.buf)))
		}
		k, err := syscall.Read(fd, s.buf[fill:])
		if err != nil || k == 0 {
			return fail(fmt.Errorf("response head: %v", cmp.Or[error](err, io.ErrUnexpectedEOF)))
		}
		fill += k
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return fail(err)
	}
	s.fd, s.id, s.end = fd, -1, false
	if s.fill > 0 {
		s.parse(time.Since(s.start))
	}
	return nil
}

// receive reads what has arrived, once, and takes its lines; false: the stream is over (ended,
// failed, or the connection's end: the server dropped it).
func (s *liveStream) receive() bool {
	if s.ended || s.err != nil {
		return false
	}
	if s.fill == len(s.buf) {
		s.buf = slices.Grow(s.buf, len(s.buf))[:2*len(s.buf)] // a line longer than the buffer
	}
	k, err := syscall.Read(s.fd, s.buf[s.fill:])
	at := time.Since(s.start)
	switch {
	case err == syscall.EAGAIN || err == syscall.EINTR:
		return true
	case err != nil || k == 0:
		return false
	}
	s.reads++
	s.fill += k
	s.parse(at)
	return !s.ended && s.err == nil
}

// parse takes the complete lines of s.buf[:s.fill], which a read returned at at, and keeps the
// incomplete last one for the next read.
func (s *liveStream) parse(at time.Duration) {
	completed := false
	pos := 0
	for !s.ended && s.err == nil {
		nl := bytes.IndexByte(s.buf[pos:s.fill], '\n')
		if nl < 0 {
			break
		}
		completed = s.line(s.buf[pos:pos+nl]) || completed
		pos += nl + 1
	}
	if completed {
		s.marks = append(s.marks, readMark{s.last, at})
	}
	s.fill = copy(s.buf, s.buf[pos:s.fill])
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

// TestLiveStreamParse: the benchmark's subscribers tell every stored event in order and the
// stored end from a gap, an event out of order and an end the server made up, however the
// stream's bytes are split into reads.
func TestLiveStreamParse(t *testing.T) {
	event := func(seq int, typ, data string) string {
		return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", seq, typ, data)
	}
	stored := func(seq int, typ string) string {
		return event(seq, typ, fmt.Sprintf(`{"type":%q,"at":"2026-11-27T10:00:00.123456Z","sequence":%d}`, typ, seq))
	}
	tests := []struct {
		name             string
		stream           string
		last, events     int64
		ended, storedEnd bool
		err              string
	}{
		{"every event and the stored end", "retry: 2000\n\n" + stored(1, "run") + ": heartbeat\n\n" + stored(2, "step") + stored(3, "end"), 3, 3, true, true, ""},
		{"an end the server made up", stored(1, "run") + "event: end\ndata: {\"type\":\"end\",\"status\":\"passed\",\"sequence\":2}\n\n", 1, 1, true, false, ""},
		{"a gap", stored(1, "run") + stored(3, "step") + stored(4, "end"), 1, 1, false, false, "event 3 after event 1"},
		{"the first event missing", stored(2, "run"), 0, 0, false, false, "event 2 after event 0"},
		{"a bad id", "id: x1\nevent: run\ndata: {}\n\n", 0, 0, false, false, "id line"},
		{"no end yet", stored(1, "run") + stored(2, "step") + "id: 3\nevent: end\nda", 2, 2, false, false, ""},
	}
	for _, tc := range tests {
		for _, size := range []int{1, 7, 64, len(tc.stream)} {
			t.Run(fmt.Sprintf("%s/reads of %d", tc.name, size), func(t *testing.T) {
				s := &liveStream{buf: make([]byte, 32), id: -1}
				for rest, reads := tc.stream, 0; len(rest) > 0 && !s.ended && s.err == nil; reads++ {
					if s.fill == len(s.buf) {
						s.buf = slices.Grow(s.buf, len(s.buf))[:2*len(s.buf)]
					}
					k := copy(s.buf[s.fill:], rest[:min(size, len(rest))])
					rest, s.fill = rest[k:], s.fill+k
					s.parse(time.Duration(reads))
				}
				if s.last != tc.last || s.events != tc.events || s.ended != tc.ended || s.storedEnd != tc.storedEnd {
					t.Errorf("last %d, %d events, ended %v, stored end %v; want %d, %d, %v, %v", s.last, s.events, s.ended, s.storedEnd, tc.last, tc.events, tc.ended, tc.storedEnd)
				}
				if got := fmt.Sprint(s.err); (tc.err == "") != (s.err == nil) || !strings.Contains(got, tc.err) {
					t.Errorf("error %v, want %q", s.err, tc.err)
				}
				if n := len(s.marks); n > 0 && s.marks[n-1].last != s.last {
					t.Errorf("last mark at event %d, the last event read is %d", s.marks[n-1].last, s.last)
				}
			})
		}
	}
}
