package reports

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/safecontent"
)

//go:embed report.html.tmpl
var templates embed.FS

var page = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"ms":     formatMs,
	"lower":  strings.ToLower,
	"failed": func(s string) bool { return s == "failed" || s == "ambiguous" || s == "undefined" },
}).ParseFS(templates, "report.html.tmpl"))

// CSP is the Content-Security-Policy of the HTML report: only the template's own inline script
// and style run, images only as the data URIs the report inlines, nothing is fetched, and the
// page is sandboxed into an opaque origin (it needs no cookie nor API call).
var CSP = func() string {
	src, err := templates.ReadFile("report.html.tmpl")
	if err != nil {
		panic(err)
	}
	return safecontent.PageCSP(string(src), "img-src data:", "frame-ancestors 'self'", "sandbox allow-scripts")
}()

// Page is the data of the HTML report.
type Page struct {
	Run    Run
	Report serverapi.RunReport
	// Images are the inlined screenshots: data URIs by artifact id. A screenshot missing here
	// (over the size budget, or unreadable) is named but not shown.
	Images map[uuid.UUID]template.URL
}

type failureView struct {
	Scenario Scenario
	Failure  Failure
	Image    template.URL // the inlined screenshot at the failure, if any
}

type pageView struct {
	Page
	Failures []failureView
	Ordered  []Scenario
	Statuses []string
	Title    string
}

// WriteHTML writes the self-contained report page: failures first, then every scenario with
// its steps, durations and screenshots, and a filter by status.
func WriteHTML(w io.Writer, p Page) error {
	v := pageView{Page: p, Title: "Run " + p.Run.ID.String()}
	if p.Run.Label != "" {
		v.Title = p.Run.Label
	}
	for _, sc := range p.Run.Scenarios {
		if f, ok := FailureOf(sc); ok {
			fv := failureView{Scenario: sc, Failure: f}
			if f.Screenshot != nil {
				fv.Image = p.Images[*f.Screenshot]
			}
			v.Failures = append(v.Failures, fv)
		}
	}
	// Failed scenarios come first, then the others in run order.
	v.Ordered = slices.Clone(p.Run.Scenarios)
	slices.SortStableFunc(v.Ordered, func(a, b Scenario) int {
		fa, fb := isFailed(a.Status), isFailed(b.Status)
		switch {
		case fa && !fb:
			return -1
		case fb && !fa:
			return 1
		}
		return 0
	})
	seen := map[string]bool{}
	for _, sc := range v.Ordered {
		if !seen[sc.Status] {
			seen[sc.Status] = true
			v.Statuses = append(v.Statuses, sc.Status)
		}
	}
	if err := page.Execute(w, v); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

func isFailed(s string) bool { return s == "failed" || s == "ambiguous" || s == "undefined" }

func formatMs(v any) string {
	var ms int64
	switch x := v.(type) {
	case *int64:
		if x == nil {
			return "–"
		}
		ms = *x
	case int64:
		ms = x
	default:
		return "–"
	}
	switch {
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	case ms < 60000:
		return fmt.Sprintf("%.1f s", float64(ms)/1000)
	}
	return fmt.Sprintf("%dm %02ds", ms/60000, (ms%60000)/1000)
}
