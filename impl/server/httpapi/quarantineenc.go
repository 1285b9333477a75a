package httpapi

import (
	"net/http"
	"strconv"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/jsonappend"
)

// quarantineListJSON is the quarantine list's 200 answer, encoded by appendQuarantineList: the
// bytes encoding/json writes for it, without its reflection, a third of the list's own Go CPU
// (docs/benchmarks.md, read paths round 8, session 12). TestEncodersMatchEncodingJSON.
type quarantineListJSON serverapi.QuarantineList

func (l quarantineListJSON) VisitListQuarantinesResponse(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) { return appendQuarantineList(b, (*serverapi.QuarantineList)(&l)) })
}

func appendQuarantineList(b []byte, l *serverapi.QuarantineList) ([]byte, error) {
	b = append(b, `{"export":{"list":`...)
	b = appendStrings(b, l.Export.List)
	b = append(b, `,"namePattern":`...)
	b = jsonappend.String(b, l.Export.NamePattern)
	b = append(b, `,"tagExpression":`...)
	b = jsonappend.String(b, l.Export.TagExpression)
	b = append(b, `},"items":`...)
	b, err := appendList(b, l.Items, appendQuarantine)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"nextCursor":`...)
	b = appendStringPtrOrNull(b, l.NextCursor)
	return append(b, '}'), nil
}

func appendQuarantine(b []byte, q *serverapi.Quarantine) ([]byte, error) {
	var err error
	b = append(b, `{"active":`...)
	b = strconv.AppendBool(b, q.Active)
	b = append(b, `,"cleanStreak":`...)
	b = strconv.AppendInt(b, int64(q.CleanStreak), 10)
	b = append(b, `,"createdAt":`...)
	if b, err = appendTime(b, q.CreatedAt); err != nil {
		return nil, err
	}
	if q.ExampleRow != nil {
		b = append(b, `,"exampleRow":`...)
		b = strconv.AppendInt(b, int64(*q.ExampleRow), 10)
	}
	if q.ExpiresAt != nil {
		b = append(b, `,"expiresAt":`...)
		if b, err = appendTime(b, *q.ExpiresAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"featurePath":`...)
	b = jsonappend.String(b, q.FeaturePath)
	b = append(b, `,"id":`...)
	b = jsonappend.UUID(b, q.Id)
	b = append(b, `,"identity":`...)
	b = jsonappend.String(b, q.Identity)
	b = append(b, `,"owner":`...)
	b = jsonappend.String(b, q.Owner)
	b = append(b, `,"project":`...)
	b = jsonappend.String(b, q.Project)
	b = append(b, `,"reason":`...)
	b = jsonappend.String(b, q.Reason)
	if q.ReleaseAfter != nil {
		b = append(b, `,"releaseAfter":`...)
		b = strconv.AppendInt(b, int64(*q.ReleaseAfter), 10)
	}
	if q.ReleaseReason != nil {
		b = append(b, `,"releaseReason":`...)
		b = jsonappend.String(b, *q.ReleaseReason)
	}
	if q.ReleasedAt != nil {
		b = append(b, `,"releasedAt":`...)
		if b, err = appendTime(b, *q.ReleasedAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"scenario":`...)
	b = jsonappend.String(b, q.Scenario)
	return append(b, '}'), nil
}
