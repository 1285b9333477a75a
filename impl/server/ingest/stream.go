package ingest

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"time"
)

// Summary is what a document says besides its scenarios.
type Summary struct {
	Format Format
	// StartedAt is when the results were produced, when the document says so.
	StartedAt *time.Time
	// Errors are what went wrong outside any scenario (see Result.Errors).
	Errors []string
}

// Emit receives the scenarios of a streamed document in document order. index is the scenario's
// position in the document; again is set when it replaces the scenario emitted before at index
// (a JUnit test case run again: its attempts and durations added up).
type Emit func(sc Scenario, index int, again bool) error

// Stream reads a document from r in format f (an empty f detects it) and calls emit with each
// scenario as soon as it is read, its texts escaped and bounded and its key unique in the
// document (see Parse). JUnit XML and Cucumber JSON are read as a stream — memory holds one test
// case or one feature, and the keys seen — while Cucumber Messages, whose results refer back to
// earlier messages, are read whole. A malformed document is an *Error, possibly after scenarios
// were emitted: the caller discards what it received.
func Stream(r io.Reader, f Format, emit Emit) (Summary, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if f == "" {
		var err error
		if f, err = detectReader(br); err != nil {
			return Summary{}, err
		}
	}
	sum := Summary{Format: f}
	k := keyer{merge: f == JUnit, seen: map[string]int{}}
	if k.merge {
		k.reruns = map[string]*rerun{}
	}
	add := func(sc Scenario) error {
		index, again := k.add(&sc)
		return emit(sc, index, again)
	}
	var err error
	switch f {
	case JUnit:
		err = parseJUnit(br, &sum, add)
	case CucumberJSON:
		err = parseCucumberJSON(&window{r: br}, &sum, add)
	case CucumberMessages:
		var data []byte
		if data, err = io.ReadAll(br); err != nil {
			return sum, err
		}
		var res Result
		if res, err = parseMessages(data); err == nil {
			sum.StartedAt, sum.Errors = res.StartedAt, res.Errors
			for _, sc := range res.Scenarios {
				if err = add(sc); err != nil {
					break
				}
			}
		}
	default:
		return Summary{}, &Error{Message: "unknown format " + string(f)}
	}
	if err != nil {
		return Summary{}, err
	}
	normalizeErrors(sum.Errors)
	return sum, nil
}

// detectReader tells the format from the first significant character, as Detect.
func detectReader(br *bufio.Reader) (Format, error) {
	for n := 512; ; n *= 2 {
		head, err := br.Peek(n)
		trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
		if len(trimmed) > 0 || err != nil || n >= br.Size() {
			return Detect(head)
		}
	}
}

// keyer gives a document's scenarios their keys: a JUnit test case run again (same suite, class
// and name: gotestsum --rerun-fails and other rerunning runners write every attempt as a test case
// of its own) is folded into the first — the last attempt gives the result, attempts and
// durations add up, so a test that passed after a failure is passed with attempts > 1 — and any
// other repeated key is suffixed (#2, #3, …) so that every scenario of a document stays.
type keyer struct {
	merge  bool
	reruns map[string]*rerun // by the key as the document gives it
	seen   map[string]int    // by the stored key
	n      int
}

type rerun struct {
	index    int
	key      string
	attempts int
	duration time.Duration
	line     int
}

// add normalizes sc, gives it its key and returns its index in the document.
func (k *keyer) add(sc *Scenario) (index int, again bool) {
	raw := sc.Key
	if k.merge {
		if prev, ok := k.reruns[raw]; ok {
			sc.Attempts += prev.attempts
			sc.Duration = AddDuration(prev.duration, sc.Duration)
			if sc.Line == 0 {
				sc.Line = prev.line
			}
			normalizeScenario(sc)
			sc.Key = prev.key
			prev.attempts, prev.duration, prev.line = sc.Attempts, sc.Duration, sc.Line
			return prev.index, true
		}
	}
	normalizeScenario(sc)
	k.seen[sc.Key]++
	if n := k.seen[sc.Key]; n > 1 {
		sc.Key += "#" + strconv.Itoa(n)
	}
	index = k.n
	k.n++
	if k.merge {
		k.reruns[raw] = &rerun{index: index, key: sc.Key, attempts: sc.Attempts, duration: sc.Duration, line: sc.Line}
	}
	return index, false
}

// window is a reader that remembers what it read since the start of the element being decoded,
// so that an error's line can be told without holding the whole document.
type window struct {
	r     io.Reader
	buf   []byte // the bytes from off on
	off   int64
	lines int // newlines before off
}

func (w *window) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.buf = append(w.buf, p[:n]...)
	return n, err
}

// forget drops what comes before offset to.
func (w *window) forget(to int64) {
	k := int(min(max(to-w.off, 0), int64(len(w.buf))))
	w.lines += bytes.Count(w.buf[:k], []byte("\n"))
	w.buf = append(w.buf[:0], w.buf[k:]...)
	w.off += int64(k)
}

// lineAt is the 1-based line of offset (the start of the window when it was forgotten).
func (w *window) lineAt(offset int64) int {
	k := int(min(max(offset-w.off, 0), int64(len(w.buf))))
	return w.lines + bytes.Count(w.buf[:k], []byte("\n")) + 1
}

// skipSpace returns the offset of the first byte at or after offset that is not space or comma.
func (w *window) skipSpace(offset int64) int64 {
	k := int(min(max(offset-w.off, 0), int64(len(w.buf))))
	return w.off + int64(skipSpace(w.buf, k))
}
