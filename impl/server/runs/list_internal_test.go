package runs

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"
)

// listScanned is the run list as it was read before list.go: gen/db's ListRuns, scanned by pgx.
// TestListDecodesBinaryRows compares the two.
func (s *Service) listScanned(ctx context.Context, f ListFilter) ([]ProjectRun, error) {
	params, err := s.listParams(ctx, f)
	if err != nil {
		return nil, err
	}
	rows, err := s.st.ListRuns(ctx, params)
	if err != nil {
		return nil, err
	}
	out := make([]ProjectRun, len(rows))
	for i, r := range rows {
		out[i] = ProjectRun{ProjectSlug: r.ProjectSlug, Run: Run{ID: r.ID, ProjectID: r.ProjectID, Status: r.Status, Trigger: r.Trigger,
			Source: r.Source, Label: r.Label, Paths: r.Paths, Tags: r.Tags, Environment: r.Environment, Branch: r.Branch,
			CommitSha: r.CommitSha, ProcessName: r.ProcessName, ScheduleID: nullable(r.ScheduleID), CreatedAt: r.CreatedAt,
			UpdatedAt: r.UpdatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Counts: r.Counts}}
	}
	return out, nil
}

var ListScanned = (*Service).listScanned

// validListRow is one well-formed row of ListRuns's raw binary values.
func validListRow() [][]byte {
	id := bytes.Repeat([]byte{7}, 16)
	ts := binary.BigEndian.AppendUint64(nil, uint64(int64(123_456_789_012)))
	arr := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 2, 'b', 'c'}
	return [][]byte{id, id, []byte("passed"), []byte("api"), []byte("execute"), nil, arr, []byte("@a"), nil, []byte("main"), nil, nil,
		id, ts, ts, nil, ts, []byte("\x01{\"total\": 1}"), []byte("proj")}
}

// TestListDecoderRefusesMalformedValues feeds the decoder values of wrong lengths, NULLs where
// the columns are NOT NULL and truncated arrays: each is an error, none a panic.
func TestListDecoderRefusesMalformedValues(t *testing.T) {
	var d listDecoder
	if err := d.add(validListRow(), 1); err != nil {
		t.Fatalf("valid row: %v", err)
	}
	runs := d.runs()
	if r := runs[0].Run; len(r.Paths) != 2 || r.Paths[1] != "bc" || *r.Branch != "main" || r.Label != nil || string(r.Counts) != `{"total": 1}` ||
		r.FinishedAt == nil || r.StartedAt != nil || !r.CreatedAt.Equal(time.Date(2000, 1, 2, 10, 17, 36, 789_012_000, time.UTC)) {
		t.Fatalf("decoded %+v", r)
	}
	// From QueryGeneric the counts (jsonb) come in the text format: the same counts.
	text := validListRow()
	text[17] = []byte(`{"total": 1}`)
	var dt listDecoder
	if err := dt.add(text, 0); err != nil || string(dt.runs()[0].Run.Counts) != `{"total": 1}` {
		t.Fatalf("counts as text: %v", err)
	}
	bad := map[string]func(v [][]byte){
		"NULL counts":       func(v [][]byte) { v[17] = nil },
		"short uuid":        func(v [][]byte) { v[0] = v[0][:15] },
		"long project uuid": func(v [][]byte) { v[1] = append(v[1], 0) },
		"NULL status":       func(v [][]byte) { v[2] = nil },
		"NULL slug":         func(v [][]byte) { v[18] = nil },
		"short array":       func(v [][]byte) { v[6] = v[6][:10] },
		"short element":     func(v [][]byte) { v[6] = v[6][:len(v[6])-1] },
		"2-d array":         func(v [][]byte) { v[6] = append([]byte{0, 0, 0, 2}, v[6][4:]...) },
		"schedule 4 bytes":  func(v [][]byte) { v[12] = []byte{1, 2, 3, 4} },
		"NULL created_at":   func(v [][]byte) { v[13] = nil },
		"short updated_at":  func(v [][]byte) { v[14] = v[14][:7] },
		"long started_at":   func(v [][]byte) { v[15] = make([]byte, 9) },
		"infinite finish":   func(v [][]byte) { v[16] = []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff} },
		"empty counts":      func(v [][]byte) { v[17] = []byte{} },
		"counts version 2":  func(v [][]byte) { v[17] = []byte("\x02{}") },
		"18 values":         func(v [][]byte) {},
	}
	for name, mutate := range bad {
		v := validListRow()
		mutate(v)
		if name == "18 values" {
			v = v[:18]
		}
		var d listDecoder
		if err := d.add(v, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzListDecoder puts arbitrary bytes in each column of a valid row: the decoder returns an
// error or runs, never panics.
func FuzzListDecoder(f *testing.F) {
	for i, v := range validListRow() {
		f.Add(uint8(i), v, false)
	}
	f.Add(uint8(6), []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1}, false)
	f.Fuzz(func(t *testing.T, col uint8, b []byte, null bool) {
		v := validListRow()
		i := int(col) % len(v)
		v[i] = b
		if null {
			v[i] = nil
		}
		var d listDecoder
		if d.add(v, 1) == nil {
			_ = d.runs()
		}
	})
}
