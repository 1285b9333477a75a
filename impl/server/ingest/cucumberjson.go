package ingest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

type cjTag struct {
	Name string `json:"name"`
}

type cjResult struct {
	Status       string   `json:"status"`
	Duration     *float64 `json:"duration"` // nanoseconds
	ErrorMessage string   `json:"error_message"`
}

type cjEmbedding struct {
	Data     string `json:"data"`
	MimeType string `json:"mime_type"`
	Media    *struct {
		Type string `json:"type"`
	} `json:"media"`
	Name string `json:"name"`
}

type cjStep struct {
	Keyword    string        `json:"keyword"`
	Name       string        `json:"name"`
	Line       int           `json:"line"`
	Result     cjResult      `json:"result"`
	Embeddings []cjEmbedding `json:"embeddings"`
	Output     []string      `json:"output"`
	DocString  *struct {
		Value string `json:"value"`
	} `json:"doc_string"`
	Rows []cjRow `json:"rows"`
	// Arguments is how cucumber-js and cucumber-ruby write a step's data table ({"rows": …}) or
	// doc string ({"content": …}).
	Arguments []struct {
		Rows    []cjRow `json:"rows"`
		Content *string `json:"content"`
	} `json:"arguments"`
}

type cjRow struct {
	Cells []string `json:"cells"`
}

type cjHook struct {
	Result     cjResult      `json:"result"`
	Embeddings []cjEmbedding `json:"embeddings"`
	Output     []string      `json:"output"`
}

type cjElement struct {
	ID             string   `json:"id"`
	Keyword        string   `json:"keyword"`
	Type           string   `json:"type"`
	Name           string   `json:"name"`
	Line           int      `json:"line"`
	Tags           []cjTag  `json:"tags"`
	Steps          []cjStep `json:"steps"`
	Before         []cjHook `json:"before"`
	After          []cjHook `json:"after"`
	StartTimestamp string   `json:"start_timestamp"`
}

type cjFeature struct {
	URI      string      `json:"uri"`
	ID       string      `json:"id"`
	Name     string      `json:"name"`
	Line     int         `json:"line"`
	Tags     []cjTag     `json:"tags"`
	Elements []cjElement `json:"elements"`
}

// parseCucumberJSON reads the Cucumber JSON report (cucumber-jvm, cucumber-js, godog, …): an
// array of features whose elements are scenarios; a background element's steps belong to the
// scenario that follows it.
// Features are decoded one at a time, and their scenarios emitted.
func parseCucumberJSON(data *window, res *Summary, emit func(Scenario) error) error {
	d := json.NewDecoder(data)
	tok, err := d.Token()
	if err != nil {
		return jsonError(data, d.InputOffset(), "", err)
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '[' {
		return &Error{Line: 1, Message: "Cucumber JSON is an array of features"}
	}
	outlineRows := map[string]struct{ row, line int }{}
	for i := 0; d.More(); i++ {
		start := d.InputOffset()
		data.forget(start)
		el := fmt.Sprintf("feature [%d]", i)
		var f cjFeature
		if err := d.Decode(&f); err != nil {
			return jsonError(data, d.InputOffset(), el, err)
		}
		line := data.lineAt(data.skipSpace(start))
		if f.URI == "" && f.Name == "" {
			return &Error{Line: line, Element: el, Message: "a feature has neither uri nor name"}
		}
		uri := strings.TrimPrefix(f.URI, "file:")
		if uri == "" {
			uri = f.Name
		}
		var background []Step
		for j, e := range f.Elements {
			steps := make([]Step, 0, len(e.Steps))
			var statuses []string
			for _, s := range e.Steps {
				st := cjToStep(s)
				steps = append(steps, st)
			}
			if e.Type == "background" || strings.EqualFold(strings.TrimSpace(e.Keyword), "background") {
				background = steps
				continue
			}
			if len(background) > 0 && !hasBackground(steps, background) {
				steps = append(append([]Step{}, background...), steps...)
			}
			background = nil
			var dur time.Duration
			var failure *StepError
			for _, h := range e.Before {
				statuses = append(statuses, normStatus(h.Result.Status))
				if normStatus(h.Result.Status) == "failed" && failure == nil {
					failure = &StepError{Message: firstLine(h.Result.ErrorMessage), Stack: h.Result.ErrorMessage, Type: "before hook"}
				}
				dur = AddDuration(dur, nanos(h.Result.Duration))
			}
			for k, st := range steps {
				statuses = append(statuses, st.Status)
				if st.Duration != nil {
					dur = AddDuration(dur, *st.Duration)
				}
				if st.Status == "failed" && failure == nil && st.Error != nil {
					failure = st.Error
				}
				steps[k].Keyword = st.Keyword
			}
			for _, h := range e.After {
				statuses = append(statuses, normStatus(h.Result.Status))
				if normStatus(h.Result.Status) == "failed" && failure == nil {
					failure = &StepError{Message: firstLine(h.Result.ErrorMessage), Stack: h.Result.ErrorMessage, Type: "after hook"}
				}
				dur = AddDuration(dur, nanos(h.Result.Duration))
				if len(steps) > 0 {
					steps[len(steps)-1].Attachments = append(steps[len(steps)-1].Attachments, cjAttachments(h.Embeddings, h.Output)...)
				}
			}
			sc := Scenario{Module: moduleOf(uri), FeaturePath: uri, FeatureName: f.Name, Name: e.Name, Line: e.Line,
				Status: worst(statuses), Error: failure, Attempts: 1, Duration: dur, Steps: steps, Tags: []string{}}
			if sc.Status == "failed" && sc.Error == nil {
				sc.Error = &StepError{Message: "failed"}
			}
			for _, t := range e.Tags {
				sc.Tags = append(sc.Tags, t.Name)
			}
			if kw := strings.ToLower(e.Keyword); strings.Contains(kw, "outline") || strings.Contains(kw, "template") || strings.Contains(e.ID, ";;") {
				// The rows of one outline share its steps' lines (their names differ when the
				// outline's name holds a placeholder); a row whose line does not follow the previous
				// one starts the next Examples table, and rows are numbered within their table.
				ok := uri + "\x1f" + outlineIdentity(e)
				o := outlineRows[ok]
				if o.row == 0 || (e.Line != o.line && e.Line != o.line+1) {
					o.row = 1
				} else {
					o.row++
				}
				o.line = e.Line
				outlineRows[ok] = o
				sc.ExampleRow = ptr(o.row)
			}
			key := e.ID
			if key == "" {
				key = strconv.Itoa(e.Line)
			}
			sc.Key = "cucumber:" + uri + "\x1f" + key
			if e.ID == "" && e.Line == 0 {
				sc.Key += "\x1f" + strconv.Itoa(j)
			}
			if e.StartTimestamp != "" && res.StartedAt == nil {
				if at, ok := parseTimestamp(e.StartTimestamp); ok {
					res.StartedAt = &at
				}
			}
			if err := emit(sc); err != nil {
				return err
			}
		}
	}
	if _, err := d.Token(); err != nil {
		return jsonError(data, d.InputOffset(), "", err)
	}
	return nil
}

// outlineIdentity tells the outline an element is a row of: the last line of its steps (a line
// of the outline itself, past any background), or its name when it has no steps.
func outlineIdentity(e cjElement) string {
	last := 0
	for _, st := range e.Steps {
		last = max(last, st.Line)
	}
	if last == 0 {
		return "name:" + e.Name
	}
	return "step-line:" + strconv.Itoa(last)
}

// hasBackground reports whether a scenario's steps already start with the background's (godog
// writes them into the scenario).
func hasBackground(steps, bg []Step) bool {
	if len(steps) < len(bg) {
		return false
	}
	for i := range bg {
		if steps[i].Line != bg[i].Line || steps[i].Text != bg[i].Text {
			return false
		}
	}
	return true
}

func cjToStep(s cjStep) Step {
	st := Step{Keyword: s.Keyword, Text: s.Name, Line: s.Line, Status: normStatus(s.Result.Status)}
	if s.Result.Duration != nil {
		d := nanos(s.Result.Duration)
		st.Duration = &d
	}
	if s.Result.ErrorMessage != "" {
		st.Error = &StepError{Message: firstLine(s.Result.ErrorMessage), Stack: s.Result.ErrorMessage}
	} else if st.Status == "failed" {
		st.Error = &StepError{Message: "failed"}
	}
	if s.DocString != nil {
		v := s.DocString.Value
		st.DocString = &v
	}
	rows := s.Rows
	for _, a := range s.Arguments {
		if a.Content != nil && st.DocString == nil {
			v := *a.Content
			st.DocString = &v
		}
		if len(rows) == 0 {
			rows = a.Rows
		}
	}
	for _, r := range rows {
		st.DataTable = append(st.DataTable, r.Cells)
	}
	st.Attachments = cjAttachments(s.Embeddings, s.Output)
	return st
}

func cjAttachments(embeddings []cjEmbedding, output []string) []Attachment {
	var out []Attachment
	for i, e := range embeddings {
		mt := e.MimeType
		if mt == "" && e.Media != nil {
			mt = e.Media.Type
		}
		if mt == "" {
			mt = "application/octet-stream"
		}
		data, err := base64.StdEncoding.DecodeString(e.Data)
		if err != nil {
			data = []byte(e.Data) // some tools embed text as is
		}
		name := e.Name
		if name == "" {
			name = "embedding-" + strconv.Itoa(i+1) + extensionOf(mt)
		}
		out = append(out, Attachment{Name: name, MediaType: mt, Data: data})
	}
	if len(output) > 0 {
		out = append(out, Attachment{Name: "output.txt", MediaType: "text/plain", Data: []byte(strings.Join(output, "\n"))})
	}
	return out
}

func extensionOf(mediaType string) string {
	switch strings.ToLower(strings.TrimSpace(strings.Split(mediaType, ";")[0])) {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "text/plain":
		return ".txt"
	case "application/json":
		return ".json"
	case "text/html":
		return ".html"
	case "video/webm":
		return ".webm"
	}
	return ""
}

// nanos is a Cucumber JSON duration (nanoseconds; JSON has no NaN or infinity), clamped.
func nanos(d *float64) time.Duration {
	if d == nil {
		return 0
	}
	out, _ := clampDuration(*d / 1e9)
	return out
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t' || data[i] == ',') {
		i++
	}
	return i
}

// jsonError names the line (and member) of a JSON decoding failure.
func jsonError(data *window, offset int64, element string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &Error{Line: data.lineAt(syn.Offset), Element: element, Message: "malformed JSON: " + syn.Error()}
	case errors.As(err, &typ):
		el := element
		if typ.Field != "" {
			el = strings.TrimSpace(element + " member " + typ.Field)
		}
		return &Error{Line: data.lineAt(typ.Offset), Element: el, Message: fmt.Sprintf("expected %s, found JSON %s", typ.Type, typ.Value)}
	}
	return &Error{Line: data.lineAt(offset), Element: element, Message: "malformed JSON: " + err.Error()}
}

func ptr[T any](v T) *T { return &v }
