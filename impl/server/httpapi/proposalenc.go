package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/jsonappend"
	"github.com/sdods/sdods/impl/server/agents"
)

// proposalsPage is GET /api/proposals' 200 answer, written by appendProposalItem: the items as
// proposalOut builds them, without decoding the stored evidence into a map to encode it again
// (issue 31 item 3; TestListItemsMatchTheirDetail compares each item with GET /api/proposals/{id}).
type proposalsPage struct {
	Items      []agents.ProposalView
	NextCursor *string
}

func (p proposalsPage) VisitListProposalsResponse(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) {
		return appendPage(b, p.Items, p.NextCursor, appendProposalItem)
	})
}

// appendProposalItem appends a listed proposal (its decider read with it) with the fields, in the
// order, of serverapi.Proposal.
func appendProposalItem(b []byte, p *agents.ProposalView) ([]byte, error) {
	var err error
	b = append(b, `{"confidence":`...)
	b = appendFloat32(b, p.Confidence)
	b = append(b, `,"createdAt":`...)
	if b, err = appendTime(b, p.CreatedAt); err != nil {
		return nil, err
	}
	if p.DecidedAt != nil {
		b = append(b, `,"decidedAt":`...)
		if b, err = appendTime(b, *p.DecidedAt); err != nil {
			return nil, err
		}
	}
	if c := p.Decider; c != nil {
		b = append(b, `,"decidedBy":{"displayName":`...)
		b = jsonappend.String(b, c.DisplayName)
		b = append(b, `,"email":`...)
		if b, err = appendMarshal(b, openapi_types.Email(c.Email)); err != nil {
			return nil, err
		}
		b = append(b, `,"id":`...)
		b = jsonappend.UUID(b, c.ID)
		b = append(b, '}')
	}
	if p.Diff != nil {
		b = append(b, `,"diff":`...)
		b = jsonappend.String(b, *p.Diff)
	}
	b = append(b, `,"evidence":`...)
	b = appendStoredObject(b, p.Evidence)
	b = append(b, `,"id":`...)
	b = jsonappend.UUID(b, p.ID)
	if p.JobID.Valid {
		b = append(b, `,"jobId":`...)
		b = jsonappend.UUID(b, p.JobID.UUID)
	}
	b = append(b, `,"kind":`...)
	b = jsonappend.String(b, p.Kind)
	b = append(b, `,"project":`...)
	b = jsonappend.String(b, p.ProjectSlug)
	if p.Reason != nil {
		b = append(b, `,"reason":`...)
		b = jsonappend.String(b, *p.Reason)
	}
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, p.Status)
	b = append(b, `,"target":`...)
	var t serverapi.ProposalTarget
	_ = json.Unmarshal(p.Target, &t)
	b = appendProposalTarget(b, &t)
	b = append(b, `,"title":`...)
	b = jsonappend.String(b, p.Title)
	b = append(b, `,"updatedAt":`...)
	if b, err = appendTime(b, p.UpdatedAt); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendStoredObject appends a stored JSON document (jsonb's text) as json.Unmarshal into a
// map[string]any and encoding/json would write it, up to the form of its numbers and the order
// of its keys: an object as it is, null as null, anything else (or nothing) {}.
func appendStoredObject(b []byte, doc []byte) []byte {
	doc = bytes.TrimSpace(doc)
	switch {
	case len(doc) > 0 && doc[0] == '{':
		return append(b, doc...)
	case bytes.Equal(doc, []byte("null")):
		return append(b, "null"...)
	}
	return append(b, "{}"...)
}

func appendProposalTarget(b []byte, t *serverapi.ProposalTarget) []byte {
	b = append(b, '{')
	n := 0
	str := func(k string, v *string) {
		if v == nil {
			return
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = jsonappend.String(b, k)
		b = append(b, ':')
		b = jsonappend.String(b, *v)
	}
	str("baseline", t.Baseline)
	str("etag", t.Etag)
	str("featurePath", t.FeaturePath)
	if t.RunId != nil {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `"runId":`...)
		b = jsonappend.UUID(b, *t.RunId)
	}
	str("scenario", t.Scenario)
	str("scenarioName", t.ScenarioName)
	return append(b, '}')
}

// appendFloat32 appends f as encoding/json writes a float32 (shortest form; exponent form below
// 1e-6 and from 1e21, with a two-digit negative exponent cleaned to one).
func appendFloat32(b []byte, f float32) []byte {
	if out, ok := jsonappend.Float(b, float64(f), 32); ok {
		return out
	}
	return append(b, "null"...) // encoding/json refuses NaN and the infinities; a stored real is neither
}
