package httpapi

import "net/http"

// rawPage is a list page whose items are JSON documents built before the answer (by the service
// that read them, issue 31 item 3): {"items":[…],"nextCursor":…} as encoding/json writes a list
// page, with the items (comma-separated) spliced in as they are, never decoded. A list's 200
// answer is a named rawPage type with the operation's Visit method (agentJobsPage).
type rawPage struct {
	Items      []byte
	NextCursor *string
}

// appendRawPage appends the page; no items is an empty list.
func appendRawPage(b []byte, items []byte, next *string) []byte {
	b = append(b, `{"items":[`...)
	b = append(b, items...)
	b = append(b, `],"nextCursor":`...)
	b = appendStringPtrOrNull(b, next)
	return append(b, '}')
}

func (p rawPage) write(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) { return appendRawPage(b, p.Items, p.NextCursor), nil })
}

// agentJobsPage is GET /api/agents/jobs' 200 answer.
type agentJobsPage rawPage

func (p agentJobsPage) VisitListAgentJobsResponse(w http.ResponseWriter) error {
	return rawPage(p).write(w)
}
