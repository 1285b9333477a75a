package features

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Action is one recorded browser action (RecordedAction of openapi/server.yaml).
type Action struct {
	Type     string `json:"type"`
	Selector string `json:"selector,omitempty"`
	Value    string `json:"value,omitempty"`
	URL      string `json:"url,omitempty"`
	Text     string `json:"text,omitempty"`
	Name     string `json:"name,omitempty"`
}

// RecordError is a recording that cannot become a feature; Index is the action or HAR entry.
type RecordError struct {
	Index   int
	Member  string
	Message string
}

func (e *RecordError) Error() string { return e.Message }

// q quotes a value as a Cucumber {string} argument.
func q(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// The phrasing of recorded steps. They are written with the built-in step library's patterns so
// that a draft validates as it is.
var actionSteps = map[string]func(a Action) (kind, text string, err string){
	"navigate": func(a Action) (string, string, string) {
		return "Given", "I open " + q(a.URL), need(a.URL, "url")
	},
	"click": func(a Action) (string, string, string) {
		return "When", "I click " + q(a.Selector), need(a.Selector, "selector")
	},
	"fill": func(a Action) (string, string, string) {
		return "When", "I fill " + q(a.Selector) + " with " + q(a.Value), need(a.Selector, "selector")
	},
	"select": func(a Action) (string, string, string) {
		return "When", "I select " + q(a.Value) + " in " + q(a.Selector), need(a.Selector, "selector")
	},
	// The library has no check step: checking a box is clicking it.
	"check": func(a Action) (string, string, string) {
		return "When", "I click " + q(a.Selector), need(a.Selector, "selector")
	},
	"press": func(a Action) (string, string, string) {
		return "When", "I press " + q(a.Value), need(a.Value, "value")
	},
	"waitFor": func(a Action) (string, string, string) {
		return "Then", "I wait for " + q(a.Selector), need(a.Selector, "selector")
	},
	"assertText": func(a Action) (string, string, string) {
		if a.Selector != "" {
			return "Then", "I should see " + q(a.Text) + " in " + q(a.Selector), need(a.Text, "text")
		}
		return "Then", "I should see " + q(a.Text), need(a.Text, "text")
	},
	"screenshot": func(a Action) (string, string, string) {
		if a.Name == "" {
			return "Then", "I take a screenshot", ""
		}
		return "Then", "I take a screenshot named " + q(a.Name), ""
	},
}

func need(v, member string) string {
	if v == "" {
		return member
	}
	return ""
}

type draft struct {
	b    strings.Builder
	last string
}

func newDraft(name, tag string) *draft {
	d := &draft{}
	fmt.Fprintf(&d.b, "%s\nFeature: %s\n\n  Scenario: %s\n", tag, oneLine(name), oneLine(name))
	return d
}

// step writes a step, turning a repeated keyword into And.
func (d *draft) step(kind, text string) {
	kw := kind
	if kind == d.last {
		kw = "And"
	}
	d.last = kind
	fmt.Fprintf(&d.b, "    %s %s\n", kw, text)
}

func (d *draft) docString(s string) {
	d.b.WriteString("      \"\"\"\n")
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		line = strings.ReplaceAll(line, `"""`, `\"\"\"`)
		d.b.WriteString("      " + strings.TrimRight(line, " \t\r") + "\n")
	}
	d.b.WriteString("      \"\"\"\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// DraftFromActions writes a feature of browser steps from recorded actions.
func DraftFromActions(name string, actions []Action) (string, error) {
	if len(actions) == 0 {
		return "", &RecordError{Index: -1, Member: "actions", Message: "the recording has no actions"}
	}
	d := newDraft(name, "@recorded @browser")
	for i, a := range actions {
		f, ok := actionSteps[a.Type]
		if !ok {
			return "", &RecordError{Index: i, Member: "type", Message: fmt.Sprintf("action %d: unknown type %q", i, a.Type)}
		}
		kind, text, missing := f(a)
		if missing != "" {
			return "", &RecordError{Index: i, Member: missing, Message: fmt.Sprintf("action %d (%s) needs %s", i, a.Type, missing)}
		}
		d.step(kind, text)
	}
	return d.b.String(), nil
}

type harDoc struct {
	Log struct {
		Entries []struct {
			Request struct {
				Method   string `json:"method"`
				URL      string `json:"url"`
				Headers  []struct{ Name, Value string }
				PostData *struct {
					MimeType string `json:"mimeType"`
					Text     string `json:"text"`
				} `json:"postData"`
			} `json:"request"`
			Response struct {
				Status  int `json:"status"`
				Content struct {
					MimeType string `json:"mimeType"`
				} `json:"content"`
			} `json:"response"`
		} `json:"entries"`
	} `json:"log"`
}

// assets are responses a recorded page loads by itself; a draft of API calls leaves them out.
var assets = []string{"image/", "font/", "text/css", "javascript", "text/html"}

// DraftFromHAR writes a feature of HTTP steps from a HAR 1.2 document: one request and a status
// assertion per API call (static assets and pages are left out).
func DraftFromHAR(name string, har map[string]any) (string, error) {
	raw, err := json.Marshal(har)
	if err != nil {
		return "", &RecordError{Index: -1, Member: "har", Message: "the HAR document is not JSON"}
	}
	var h harDoc
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", &RecordError{Index: -1, Member: "har", Message: "the HAR document is not HAR 1.2: " + err.Error()}
	}
	d := newDraft(name, "@recorded @http")
	n := 0
	for i, e := range h.Log.Entries {
		u, err := url.Parse(e.Request.URL)
		if err != nil || e.Request.Method == "" || u.Scheme == "" {
			return "", &RecordError{Index: i, Member: "har", Message: fmt.Sprintf("HAR entry %d: a request needs a method and an absolute URL", i)}
		}
		if isAsset(e.Response.Content.MimeType) {
			continue
		}
		n++
		headers := map[string]string{}
		for _, hd := range e.Request.Headers {
			switch strings.ToLower(hd.Name) {
			case "content-type", "accept":
				headers[hd.Name] = hd.Value
			}
		}
		names := make([]string, 0, len(headers))
		for k := range headers {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			d.step("Given", "I set the header "+q(k)+" to "+q(headers[k]))
		}
		body := ""
		if e.Request.PostData != nil {
			body = e.Request.PostData.Text
		}
		if body != "" {
			d.step("When", "I send a "+strings.ToUpper(e.Request.Method)+" request to "+q(u.String()))
			d.docString(body)
		} else {
			d.step("When", "I send a "+strings.ToUpper(e.Request.Method)+" request to "+q(u.String()))
		}
		if e.Response.Status > 0 {
			d.step("Then", "the response status is "+strconv.Itoa(e.Response.Status))
		}
		d.last = ""
	}
	if n == 0 {
		return "", &RecordError{Index: -1, Member: "har", Message: "the HAR document has no API calls (entries other than pages and static assets)"}
	}
	return d.b.String(), nil
}

func isAsset(mime string) bool {
	for _, a := range assets {
		if strings.Contains(mime, a) {
			return true
		}
	}
	return false
}
