package steplib

import (
	"errors"
	"strconv"
	"time"

	"github.com/sdods/sdods/impl/jsonappend"
)

// errTraceJSON is what AppendJSON refuses: what encoding/json refuses too (a time outside the
// years 0–9999, a NaN or infinite duration).
var errTraceJSON = errors.New("steplib: the trace manifest holds a value JSON cannot hold")

// AppendJSON appends the manifest as encoding/json's Marshal writes it, byte for byte, without its
// reflection (a run's every scenario writes one). It refuses what Marshal refuses; the caller
// then uses Marshal, which gives the error.
func (m *TraceManifest) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(m.Version), 10)
	b = strconv.AppendInt(append(b, `,"attempt":`...), int64(m.Attempt), 10)
	b = jsonappend.String(append(b, `,"status":`...), m.Status)
	b = jsonappend.String(append(b, `,"files":`...), m.Files)
	b = append(b, `,"steps":`...)
	if m.Steps == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range m.Steps {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = m.Steps[i].appendJSON(b); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func (st *TraceStep) appendJSON(b []byte) ([]byte, error) {
	var err error
	b = strconv.AppendInt(append(b, `{"index":`...), int64(st.Index), 10)
	b = jsonappend.String(append(b, `,"keyword":`...), st.Keyword)
	b = jsonappend.String(append(b, `,"text":`...), st.Text)
	b = optString(b, `,"definition":`, st.Definition)
	b = jsonappend.String(append(b, `,"kind":`...), st.Kind)
	b = jsonappend.String(append(b, `,"status":`...), st.Status)
	b = optString(b, `,"error":`, st.Error)
	if b, err = appendTraceTime(append(b, `,"startedAt":`...), st.StartedAt); err != nil {
		return b, err
	}
	b = strconv.AppendInt(append(b, `,"durationMs":`...), st.DurationMs, 10)
	b = optString(b, `,"before":`, st.Before)
	b = optString(b, `,"after":`, st.After)
	b = optString(b, `,"dom":`, st.DOM)
	b = optString(b, `,"url":`, st.URL)
	if t := st.Target; t != nil {
		b = jsonappend.String(append(b, `,"target":{"selector":`...), t.Selector)
		b = append(optString(b, `,"html":`, t.HTML), '}')
	}
	b = append(b, `,"console":`...)
	if st.Console == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range st.Console {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendTraceTime(append(b, `{"at":`...), c.At); err != nil {
				return b, err
			}
			b = jsonappend.String(append(b, `,"level":`...), c.Level)
			b = append(jsonappend.String(append(b, `,"text":`...), c.Text), '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"network":`...)
	if st.Network == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, q := range st.Network {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = q.appendJSON(b); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	if h := st.HTTP; h != nil {
		b = h.appendJSON(append(b, `,"http":`...))
	}
	if len(st.Notes) > 0 {
		b = append(b, `,"notes":[`...)
		for i, n := range st.Notes {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonappend.String(b, n)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func (q *TraceRequest) appendJSON(b []byte) ([]byte, error) {
	if q == nil {
		return append(b, "null"...), nil
	}
	var err error
	if b, err = appendTraceTime(append(b, `{"at":`...), q.At); err != nil {
		return b, err
	}
	b = jsonappend.String(append(b, `,"method":`...), q.Method)
	b = jsonappend.String(append(b, `,"url":`...), q.URL)
	b = optString(b, `,"type":`, q.Type)
	b = optInt(b, `,"status":`, q.Status)
	b = optString(b, `,"statusText":`, q.StatusText)
	b = optString(b, `,"mimeType":`, q.MimeType)
	if q.DurationMs != nil {
		if b, err = appendTraceFloat(append(b, `,"durationMs":`...), *q.DurationMs); err != nil {
			return b, err
		}
	}
	b = optInt(b, `,"requestBytes":`, q.RequestBytes)
	b = optInt(b, `,"responseBytes":`, q.ResponseBytes)
	b = optString(b, `,"failure":`, q.Failure)
	b = optString(b, `,"responseBody":`, q.ResponseBody)
	return append(b, '}'), nil
}

func (h *TraceHTTP) appendJSON(b []byte) []byte {
	b = jsonappend.String(append(b, `{"method":`...), h.Method)
	b = jsonappend.String(append(b, `,"url":`...), h.URL)
	if len(h.RequestHeaders) > 0 {
		b = jsonappend.StringMap(append(b, `,"requestHeaders":`...), h.RequestHeaders)
	}
	b = optString(b, `,"requestBody":`, h.RequestBody)
	b = optInt(b, `,"status":`, h.Status)
	if len(h.ResponseHeaders) > 0 {
		b = jsonappend.StringMap(append(b, `,"responseHeaders":`...), h.ResponseHeaders)
	}
	b = optString(b, `,"responseBody":`, h.ResponseBody)
	b = strconv.AppendInt(append(b, `,"durationMs":`...), h.DurationMs, 10)
	b = optString(b, `,"error":`, h.Error)
	return append(b, '}')
}

func optString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return jsonappend.String(append(b, key...), v)
}

func optInt(b []byte, key string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(v), 10)
}

// appendTraceTime is time.Time's MarshalJSON, refusing what it refuses.
func appendTraceTime(b []byte, t time.Time) ([]byte, error) {
	b, ok := jsonappend.Time(b, t)
	if !ok {
		return b, errTraceJSON
	}
	return b, nil
}

// appendTraceFloat is encoding/json's float64, refusing what it refuses.
func appendTraceFloat(b []byte, f float64) ([]byte, error) {
	b, ok := jsonappend.Float(b, f, 64)
	if !ok {
		return b, errTraceJSON
	}
	return b, nil
}
