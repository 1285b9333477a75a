package runner

import (
	"encoding/json"
	"strconv"

	"github.com/sdods/sdods/impl/server/steplib"
)

// Tracing is what the runner records of a run's scenarios for the trace viewer
// (docs/reports.md, "Tracing").
type Tracing string

// The tracing modes, as the project setting names them.
const (
	// TracingOff records nothing.
	TracingOff Tracing = "off"
	// TracingOnFailure records every attempt; an attempt that failed keeps everything, any
	// other only its manifest (timings, console, network, the acted-on element: kilobytes),
	// which the trace diff compares a later failure with.
	TracingOnFailure Tracing = "on_failure"
	// TracingAlways keeps everything of every attempt.
	TracingAlways Tracing = "always"
)

// ParseTracing returns the mode named s; "" and unknown names are TracingOff.
func ParseTracing(s string) Tracing {
	switch t := Tracing(s); t {
	case TracingOnFailure, TracingAlways:
		return t
	}
	return TracingOff
}

func (t Tracing) recorder() *steplib.Recorder {
	if t != TracingOnFailure && t != TracingAlways {
		return nil
	}
	return steplib.NewRecorder(steplib.TraceLimits{})
}

// TraceManifestName is the name of the manifest of an attempt's trace, an artifact of the
// scenario without a step; its files are named TraceFileName(attempt, file).
func TraceManifestName(attempt int) string { return "trace-a" + strconv.Itoa(attempt) + ".json" }

// TraceFileName is the stored name of a file of an attempt's trace.
func TraceFileName(attempt int, name string) string {
	return "trace-a" + strconv.Itoa(attempt) + "-" + name
}

// keepTrace stores what tracing keeps of an attempt, as attachments of the scenario without a
// step (so that they are not step attachments in reports): the files first, then the manifest
// that names them. Text is masked like every attachment; the screenshots are left whole.
func keepTrace(em *emitter, sid string, vars *steplib.Variables, rec *steplib.Recorder, mode Tracing, attempt int, status steplib.Status) {
	if rec == nil {
		return
	}
	m, files := rec.Manifest(attempt, string(status))
	full := mode == TracingAlways || status == steplib.StatusFailed
	if !full {
		m, files = m.Summary(), nil
	}
	for i := range m.Steps {
		st := &m.Steps[i]
		st.Before, st.After, st.DOM = prefixed(attempt, st.Before), prefixed(attempt, st.After), prefixed(attempt, st.DOM)
	}
	for _, f := range files {
		data := f.Data
		if f.MediaType == "text/html" {
			data = vars.MaskBytes(data)
		}
		name := TraceFileName(attempt, f.Name)
		em.emit(Event{Type: EventAttachment, ScenarioID: sid, Attachment: &AttachmentEvent{Name: name, MediaType: f.MediaType, Size: len(data), Data: data}})
	}
	b, err := m.AppendJSON(make([]byte, 0, 512+512*len(m.Steps)))
	if err != nil {
		// What AppendJSON refuses, encoding/json refuses too: Marshal says why, and nothing is kept.
		if b, err = json.Marshal(m); err != nil {
			return
		}
	}
	b = vars.MaskBytes(b)
	em.emit(Event{Type: EventAttachment, ScenarioID: sid, Attachment: &AttachmentEvent{Name: TraceManifestName(attempt), MediaType: "application/json", Size: len(b), Data: b}})
}

func prefixed(attempt int, name string) string {
	if name == "" {
		return ""
	}
	return TraceFileName(attempt, name)
}
