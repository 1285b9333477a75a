package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/runs"
)

// manyScenarios is a feature of n quick HTTP scenarios against the runs tests' web application.
func manyScenarios(n int) string {
	var b strings.Builder
	b.WriteString("Feature: Many\n")
	for i := range n {
		fmt.Fprintf(&b, "\n  Scenario: Health %d\n    When I send a GET request to \"/api/health\"\n    Then the response status is 200\n", i)
	}
	return b.String()
}

// rawEvent is one server-sent event as it came over the wire.
type rawEvent struct {
	ID, Event, Data string
}

// readStream reads a run's event stream to its end event (or to its close) with client, calling
// got for each event as it arrives.
func readStream(ctx context.Context, client *http.Client, url, lastEventID string, header http.Header, got func(rawEvent)) (ended bool, err error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return false, fmt.Errorf("events: status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	cur := rawEvent{}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Event != "" {
				got(cur)
				if cur.Event == "end" {
					return true, nil
				}
			}
			cur = rawEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.Data = line[6:]
		}
	}
	return false, sc.Err()
}

// TestEverySubscriberSeesTheStoredEndEvent is the regression test of the fan-out bug of issue 31:
// with many subscribers on one run, each one must receive every event exactly as stored (the
// stored end event with its id and time, never one the server made up), in order, without gaps.
func TestEverySubscriberSeesTheStoredEndEvent(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/many.feature": manyScenarios(20)})
	const subscribers = 150
	client := &http.Client{Jar: admin.Jar, Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: subscribers}}

	for round := range 2 {
		id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		url := s.URL + "/api/runs/" + id.String() + "/events"
		got := make([][]rawEvent, subscribers)
		errs := make([]error, subscribers)
		var wg sync.WaitGroup
		for i := range subscribers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				// A subscriber dropped for being slow resumes after the last event it received.
				last := ""
				for range 20 {
					ended, err := readStream(ctx, client, url, last, nil, func(e rawEvent) {
						got[i] = append(got[i], e)
						last = e.ID
					})
					if ended || err != nil {
						errs[i] = err
						return
					}
				}
				errs[i] = fmt.Errorf("no end event after 20 connections")
			}()
		}
		wg.Wait()

		stored := storedEvents(t, s, id)
		if len(stored) == 0 || stored[len(stored)-1].Event != "end" {
			t.Fatalf("round %d: stored events end with %+v", round, stored[len(stored)-1])
		}
		bad := 0
		for i := range subscribers {
			if errs[i] != nil {
				t.Errorf("round %d: subscriber %d: %v", round, i, errs[i])
				bad++
				continue
			}
			if len(got[i]) != len(stored) {
				t.Errorf("round %d: subscriber %d received %d events, %d are stored (last %+v)", round, i, len(got[i]), len(stored), got[i][len(got[i])-1])
				bad++
				continue
			}
			for j, e := range got[i] {
				if e != stored[j] {
					t.Errorf("round %d: subscriber %d event %d is %+v, stored %+v", round, i, j, e, stored[j])
					bad++
					break
				}
			}
		}
		if bad > 0 {
			t.Fatalf("round %d: %d of %d subscribers did not receive the stored events", round, bad, subscribers)
		}
	}
}

// storedEvents returns a run's stored events as the stream must send them.
func storedEvents(t *testing.T, s *apptest.Server, id uuid.UUID) []rawEvent {
	t.Helper()
	rows, err := s.App.Store.Pool.Query(context.Background(), "SELECT seq, type, data FROM run_events WHERE run_id = $1 ORDER BY seq", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []rawEvent
	for rows.Next() {
		var seq int64
		var typ string
		var data json.RawMessage
		if err := rows.Scan(&seq, &typ, &data); err != nil {
			t.Fatal(err)
		}
		// jsonb reorders members: compare the stream's data as the database returns it.
		out = append(out, rawEvent{ID: fmt.Sprint(seq), Event: typ, Data: string(data)})
	}
	return out
}

// blockingWriter holds its first write after the stream's preamble until release is closed,
// as a subscriber whose connection stopped reading would.
type blockingWriter struct {
	mu      sync.Mutex
	buf     strings.Builder
	writes  int
	release chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	n := w.writes
	w.mu.Unlock()
	if n == 2 {
		<-w.release
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestSlowSubscriberIsDroppedAndResumes: a subscriber that stops reading is dropped (its stream
// ends without the end event) while the run goes on at its own pace; resuming after the last id it
// received gives exactly the rest, ending with the stored end event.
func TestSlowSubscriberIsDroppedAndResumes(t *testing.T) {
	defer func(n int) { runs.SubscriberBacklog = n }(runs.SubscriberBacklog)
	runs.SubscriberBacklog = 1
	// Events are written in batches (a few per scenario): with a feed that reads each batch on its
	// own, the run makes many more batches than the stuck subscriber can hold.
	defer func(d time.Duration) { runs.FeedCoalesce = d }(runs.FeedCoalesce)
	runs.FeedCoalesce = time.Millisecond
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := webApp(t)
	// Paced scenarios (20 ms each): the run goes on for most of a second after the subscriber is
	// stuck, a batch at each scenario's end, however fast the runner writes (unpaced, a quick run
	// could end in a few batches, before the stuck subscriber's backlog overflowed).
	paced := strings.ReplaceAll(manyScenarios(40), "    Then the response status is 200\n", "    Then the response status is 200\n    And I wait 0.02 seconds\n")
	project(t, admin, web.URL, map[string]string{"api/many.feature": paced})
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})

	w := &blockingWriter{release: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- s.App.Runs.Stream(context.Background(), id, 0, w) }()
	// The run ends while the subscriber is stuck: it was not held back by it.
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "passed" {
		t.Fatalf("run %s", run.Status)
	}
	if st := s.App.Runs.StreamStats(); st.Dropped < 1 {
		t.Fatalf("the stuck subscriber was not dropped: %+v", st)
	}
	close(w.release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the dropped stream did not end")
	}
	var got []rawEvent
	parse := func(text string) {
		for _, block := range strings.Split(text, "\n\n") {
			e := rawEvent{}
			for _, line := range strings.Split(block, "\n") {
				switch {
				case strings.HasPrefix(line, "id: "):
					e.ID = line[4:]
				case strings.HasPrefix(line, "event: "):
					e.Event = line[7:]
				case strings.HasPrefix(line, "data: "):
					e.Data = line[6:]
				}
			}
			if e.Event != "" {
				got = append(got, e)
			}
		}
	}
	parse(w.buf.String())
	stored := storedEvents(t, s, id)
	if len(got) == 0 || len(got) >= len(stored) {
		t.Fatalf("the dropped stream had %d of %d events", len(got), len(stored))
	}
	var rest strings.Builder
	if err := s.App.Runs.Stream(context.Background(), id, mustInt(t, got[len(got)-1].ID), &rest); err != nil {
		t.Fatal(err)
	}
	parse(rest.String())
	if len(got) != len(stored) {
		t.Fatalf("after resuming: %d events, %d stored", len(got), len(stored))
	}
	for i := range got {
		if got[i] != stored[i] {
			t.Fatalf("event %d is %+v, stored %+v", i, got[i], stored[i])
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLastEventIDAheadOfTheRunHidesNothing: a client that resumes after an id the run has not
// reached (a bogus or stale Last-Event-ID) opens the process's feed first; the streams after it
// still receive every event as stored.
func TestLastEventIDAheadOfTheRunHidesNothing(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/many.feature": manyScenarios(20)})
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ahead := make(chan error, 1)
	go func() {
		var sink strings.Builder
		ahead <- s.App.Runs.Stream(ctx, id, 1_000_000, &sink)
	}()
	for s.App.Runs.Subscribers() == 0 {
		time.Sleep(time.Millisecond)
	}
	client := &http.Client{Jar: admin.Jar}
	var got []rawEvent
	ended, err := readStream(ctx, client, s.URL+"/api/runs/"+id.String()+"/events", "", nil, func(e rawEvent) { got = append(got, e) })
	if err != nil || !ended {
		t.Fatalf("the stream after one ahead of the run: ended %v, %v, %d events", ended, err, len(got))
	}
	stored := storedEvents(t, s, id)
	if len(got) != len(stored) || got[len(got)-1] != stored[len(stored)-1] {
		t.Fatalf("%d events, %d stored; last %+v", len(got), len(stored), got[len(got)-1])
	}
	if err := <-ahead; err != nil {
		t.Fatalf("the stream ahead of the run: %v", err)
	}
}

// parseEventStream reads a whole stream of server-sent events as the specification's parser does
// (field and value split at the first colon, one optional space, comments skipped, LF or CR LF),
// not as the server formats them; it returns the dispatched events and the number of comments.
func parseEventStream(r io.Reader) (events []rawEvent, comments int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur rawEvent
	var data []string
	id := ""
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			if data != nil {
				cur.ID, cur.Data = id, strings.Join(data, "\n")
				events = append(events, cur)
			}
			cur, data = rawEvent{}, nil
		case strings.HasPrefix(line, ":"):
			comments++
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				id = value
			case "event":
				cur.Event = value
			case "data":
				data = append(data, value)
			case "retry":
			default:
				return events, comments, fmt.Errorf("unknown field %q", field)
			}
		}
	}
	return events, comments, sc.Err()
}

// TestEventStreamOverHTTP1AndHTTP2: over HTTP/1.1 the stream is the events' bytes with no
// chunked framing, delimited by the connection's close after the end event (read here from a raw
// TCP connection); a client resuming with Last-Event-ID gets exactly the rest; over HTTP/2 (TLS)
// the same stream arrives whole.
func TestEventStreamOverHTTP1AndHTTP2(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/many.feature": manyScenarios(10)})
	token := apptest.Token(t, admin, "runs:read")
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	path := "/api/runs/" + id.String() + "/events"

	raw := func(lastEventID string) []rawEvent {
		t.Helper()
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(time.Minute))
		req := "GET " + path + " HTTP/1.1\r\nHost: sdods\r\nAccept: text/event-stream\r\nAuthorization: Bearer " + token + "\r\n"
		if lastEventID != "" {
			req += "Last-Event-ID: " + lastEventID + "\r\n"
		}
		if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(conn)
		status, _ := rd.ReadString('\n')
		if status != "HTTP/1.1 200 OK\r\n" {
			t.Fatalf("status line %q", status)
		}
		header := map[string]string{}
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line == "\r\n" {
				break
			}
			k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
			header[strings.ToLower(k)] = strings.TrimSpace(v)
		}
		if header["content-type"] != "text/event-stream" || header["connection"] != "close" || header["transfer-encoding"] != "" || header["content-length"] != "" {
			t.Fatalf("headers %v", header)
		}
		// The body runs to the connection's close, which comes after the end event.
		events, _, err := parseEventStream(rd)
		if err != nil {
			t.Fatal(err)
		}
		return events
	}
	live := raw("")
	stored := storedEvents(t, s, id)
	if !slices.Equal(live, stored) || stored[len(stored)-1].Event != "end" {
		t.Fatalf("HTTP/1.1: %d events, %d stored; last %+v", len(live), len(stored), live[len(live)-1])
	}
	mid := len(stored) / 2
	if rest := raw(stored[mid].ID); !slices.Equal(rest, stored[mid+1:]) {
		t.Fatalf("resumed after %s: %d events, want %d", stored[mid].ID, len(rest), len(stored)-mid-1)
	}

	h2 := httptest.NewUnstartedServer(s.App.Handler)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	defer h2.Close()
	req, _ := http.NewRequest("GET", h2.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := h2.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
		t.Fatalf("%s %d", resp.Proto, resp.StatusCode)
	}
	events, _, err := parseEventStream(resp.Body)
	if err != nil || !slices.Equal(events, stored) {
		t.Fatalf("HTTP/2: %d events of %d, %v", len(events), len(stored), err)
	}
}
