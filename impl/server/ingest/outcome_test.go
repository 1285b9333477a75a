package ingest

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/results"
)

// TestOutcomeStoredShape proves that run_ingests.result keeps the JSON the API's IngestResult
// stored before Outcome existed, so a duplicate document still reads the stored row back.
func TestOutcomeStoredShape(t *testing.T) {
	q := 1
	id := uuid.MustParse("11111111-1111-4111-8111-111111111111")
	dom, _ := json.Marshal(Outcome{Counts: results.Counts{Failed: 1, Flaky: 2, Passed: 3, Pending: 4, Quarantined: &q, Skipped: 5, Total: 16, Undefined: 1},
		Duplicate: true, Format: JUnit, RunID: id, Status: "failed"})
	api, _ := json.Marshal(serverapi.IngestResult{Counts: serverapi.Counts{Failed: 1, Flaky: 2, Passed: 3, Pending: 4, Quarantined: &q, Skipped: 5, Total: 16, Undefined: 1},
		Duplicate: true, Format: serverapi.IngestResultFormatJunit, RunId: id, Status: serverapi.RunStatusFailed})
	if string(dom) != string(api) {
		t.Fatalf("stored shape differs\ndomain: %s\napi:    %s", dom, api)
	}
	var back Outcome
	if err := json.Unmarshal(api, &back); err != nil || back.Status != "failed" || back.Counts.Total != 16 || !back.Duplicate {
		t.Fatalf("read back: %+v, %v", back, err)
	}
}
