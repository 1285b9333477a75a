package results

import (
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// errUnsupported is returned for what encoding/json refuses too (a NaN or infinite number, a time
// outside the years 0–9999): the caller then uses encoding/json, for the same outcome.
var errUnsupported = errors.New("results: value encoding/json refuses")

// AppendJSON appends the event's stored form to dst: byte for byte what encoding/json makes of it
// (json.Marshal), without reflection. Every event of a run is encoded once, as it happens; a
// change to Event or the types it holds must change this function (TestEventJSONSameAsEncodingJSON
// compares the two).
func (e *Event) AppendJSON(dst []byte) ([]byte, error) {
	b := append(dst, '{')
	if e.ArtifactID != nil {
		b = appendUUID(append(b, `"artifactId":`...), *e.ArtifactID)
		b = append(b, ',')
	}
	b = append(b, `"at":`...)
	b, err := appendTime(b, e.At)
	if err != nil {
		return dst, err
	}
	if e.Counts != nil {
		b = e.Counts.appendJSON(append(b, `,"counts":`...))
	}
	if e.Dataset != nil {
		b = appendString(append(b, `,"dataset":`...), *e.Dataset)
	}
	if e.Heal != nil {
		if b, err = e.Heal.appendJSON(append(b, `,"heal":`...)); err != nil {
			return dst, err
		}
	}
	if e.Level != nil {
		b = appendString(append(b, `,"level":`...), *e.Level)
	}
	if e.Message != nil {
		b = appendString(append(b, `,"message":`...), *e.Message)
	}
	if e.Name != nil {
		b = appendString(append(b, `,"name":`...), *e.Name)
	}
	if e.Row != nil {
		b = strconv.AppendInt(append(b, `,"row":`...), int64(*e.Row), 10)
	}
	b = appendUUID(append(b, `,"runId":`...), e.RunID)
	if e.ScenarioID != nil {
		b = appendUUID(append(b, `,"scenarioId":`...), *e.ScenarioID)
	}
	b = strconv.AppendInt(append(b, `,"sequence":`...), e.Sequence, 10)
	if e.Status != nil {
		b = appendString(append(b, `,"status":`...), *e.Status)
	}
	if e.StepIndex != nil {
		b = strconv.AppendInt(append(b, `,"stepIndex":`...), int64(*e.StepIndex), 10)
	}
	b = appendString(append(b, `,"type":`...), e.Type)
	if e.VisualCheck != nil {
		if b, err = e.VisualCheck.appendJSON(append(b, `,"visualCheck":`...)); err != nil {
			return dst, err
		}
	}
	return append(b, '}'), nil
}

func (c *Counts) appendJSON(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"failed":`...), int64(c.Failed), 10)
	b = strconv.AppendInt(append(b, `,"flaky":`...), int64(c.Flaky), 10)
	b = strconv.AppendInt(append(b, `,"passed":`...), int64(c.Passed), 10)
	b = strconv.AppendInt(append(b, `,"pending":`...), int64(c.Pending), 10)
	if c.Quarantined != nil {
		b = strconv.AppendInt(append(b, `,"quarantined":`...), int64(*c.Quarantined), 10)
	}
	b = strconv.AppendInt(append(b, `,"skipped":`...), int64(c.Skipped), 10)
	b = strconv.AppendInt(append(b, `,"total":`...), int64(c.Total), 10)
	b = strconv.AppendInt(append(b, `,"undefined":`...), int64(c.Undefined), 10)
	return append(b, '}')
}

func (h *Heal) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	if h.Ambiguous {
		b = append(b, `"ambiguous":true,`...)
	}
	b = appendString(append(b, `"newSelector":`...), h.NewSelector)
	b = appendString(append(b, `,"oldSelector":`...), h.OldSelector)
	var err error
	if h.RunnerUp != nil {
		b, err = appendFloat32(append(b, `,"runnerUp":{"score":`...), h.RunnerUp.Score)
		if err != nil {
			return b, err
		}
		b = appendString(append(b, `,"selector":`...), h.RunnerUp.Selector)
		b = append(b, '}')
	}
	if b, err = appendFloat32(append(b, `,"score":`...), h.Score); err != nil {
		return b, err
	}
	b = appendString(append(b, `,"strategy":`...), h.Strategy)
	return append(b, '}'), nil
}

func (v *VisualCheck) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	if v.ActualArtifactID != nil {
		b = appendUUID(append(b, `"actualArtifactId":`...), *v.ActualArtifactID)
		b = append(b, ',')
	}
	if v.DiffArtifactID != nil {
		b = appendUUID(append(b, `"diffArtifactId":`...), *v.DiffArtifactID)
		b = append(b, ',')
	}
	if v.ExpectedArtifactID != nil {
		b = appendUUID(append(b, `"expectedArtifactId":`...), *v.ExpectedArtifactID)
		b = append(b, ',')
	}
	if v.MismatchPixels != nil {
		b = strconv.AppendInt(append(b, `"mismatchPixels":`...), int64(*v.MismatchPixels), 10)
		b = append(b, ',')
	}
	var err error
	if v.MismatchRatio != nil {
		if b, err = appendFloat32(append(b, `"mismatchRatio":`...), *v.MismatchRatio); err != nil {
			return b, err
		}
		b = append(b, ',')
	}
	b = appendString(append(b, `"name":`...), v.Name)
	if v.SizeMismatch != nil {
		b = strconv.AppendBool(append(b, `,"sizeMismatch":`...), *v.SizeMismatch)
	}
	b = appendString(append(b, `,"status":`...), v.Status)
	if v.Threshold != nil {
		if b, err = appendFloat32(append(b, `,"threshold":`...), *v.Threshold); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendTime is time.Time's MarshalJSON: RFC 3339 with nanoseconds, quoted, refusing what it
// refuses (a year outside 0–9999, a zone hour outside 0–23).
func appendTime(b []byte, t time.Time) ([]byte, error) {
	b = append(b, '"')
	n0 := len(b)
	b = t.AppendFormat(b, time.RFC3339Nano)
	if b[n0+len("9999")] != '-' {
		return b, errUnsupported
	}
	if b[len(b)-1] != 'Z' {
		c := b[len(b)-len("Z07:00")]
		z := b[len(b)-len("07:00"):]
		if ('0' <= c && c <= '9') || 10*(z[0]-'0')+(z[1]-'0') >= 24 {
			return b, errUnsupported
		}
	}
	return append(b, '"'), nil
}

const hexDigits = "0123456789abcdef"

// appendUUID is uuid.UUID's text form, quoted.
func appendUUID(b []byte, u uuid.UUID) []byte {
	b = append(b, '"')
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(b, '"')
}

// appendFloat32 is encoding/json's float32: ES6 number formatting.
func appendFloat32(b []byte, f32 float32) ([]byte, error) {
	f := float64(f32)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, errUnsupported
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 32)
	if format == 'e' {
		// e-09 becomes e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendString is encoding/json's string: quoted, with <, > and & escaped for HTML, invalid UTF-8
// replaced by U+FFFD, and U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
