package features

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
)

// The feature list reads gen/db's ListFeatures statement (its text and arguments, as the generated
// code builds them) but decodes the rows from PostgreSQL's binary format itself, as the run list
// does (runs.(*Service).listRuns): pgx's generic scan into sqlc's rows and the garbage it left
// were most of the list's own Go CPU (docs/benchmarks.md, read paths round 8, session 12). The
// features are those the scan gave (TestListMatchesScan).

// listOIDs are the types of ListFeatures's columns, checked before any row is decoded.
var listOIDs = [...]uint32{pgtype.UUIDOID, pgtype.UUIDOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, // id … name
	pgtype.TextArrayOID, pgtype.Int4OID, pgtype.Int4OID, pgtype.TimestamptzOID, pgtype.TimestamptzOID} // tags … updated_at

const (
	lcID = iota
	lcProjectID
	lcPath
	lcModule
	lcEtag
	lcName
	lcTags
	lcScenarioCount
	lcSizeBytes
	lcCreatedAt
	lcUpdatedAt
)

// span is a string of the page's text buffer.
type span struct{ from, to int32 }

// listRow is one decoded row: its strings spans of the page's text, its tags a range of the
// page's tag spans.
type listRow struct {
	f                        Stored // but for its strings
	path, module, etag, name span
	hasName                  bool
	tagsFrom, tagsTo         int32
}

type listDecoder struct {
	text []byte
	tags []span
	rows []listRow
}

func (d *listDecoder) str(v []byte) span {
	from := int32(len(d.text))
	d.text = append(d.text, v...)
	return span{from, int32(len(d.text))}
}

func int4(v []byte) (int, error) {
	if len(v) != 4 {
		return 0, fmt.Errorf("feature list: int4 of %d bytes", len(v))
	}
	return int(int32(binary.BigEndian.Uint32(v))), nil
}

// addTags decodes a binary one-dimensional text[] (no NULL elements, as a scan into []string).
func (d *listDecoder) addTags(v []byte) error {
	if err := store.DecodeTextArray(v, func(e []byte) { d.tags = append(d.tags, d.str(e)) }); err != nil {
		return fmt.Errorf("feature list: tags: %w", err)
	}
	return nil
}

// add decodes one row's raw values; a malformed value or a NULL in a NOT NULL column is an error.
func (d *listDecoder) add(v [][]byte) error {
	if len(v) != len(listOIDs) {
		return fmt.Errorf("feature list: %d values, want %d", len(v), len(listOIDs))
	}
	for c := range v {
		if v[c] == nil && c != lcName {
			return fmt.Errorf("feature list: NULL in NOT NULL column %d", c)
		}
	}
	var r listRow
	var err error
	if r.f.ID, err = store.DecodeUUID(v[lcID]); err != nil {
		return err
	}
	r.path, r.module, r.etag = d.str(v[lcPath]), d.str(v[lcModule]), d.str(v[lcEtag])
	if v[lcName] != nil {
		r.hasName, r.name = true, d.str(v[lcName])
	}
	r.tagsFrom = int32(len(d.tags))
	if err := d.addTags(v[lcTags]); err != nil {
		return err
	}
	r.tagsTo = int32(len(d.tags))
	if r.f.ScenarioCount, err = int4(v[lcScenarioCount]); err != nil {
		return err
	}
	if r.f.SizeBytes, err = int4(v[lcSizeBytes]); err != nil {
		return err
	}
	if r.f.CreatedAt, err = store.DecodeTimestamptz(v[lcCreatedAt]); err != nil {
		return err
	}
	if r.f.UpdatedAt, err = store.DecodeTimestamptz(v[lcUpdatedAt]); err != nil {
		return err
	}
	d.rows = append(d.rows, r)
	return nil
}

// features builds the decoded rows' features: their strings slices of one string, their tags
// ranges of one slice (empty, not nil, for an empty array, as the scan gave), their names elements
// of one slice.
func (d *listDecoder) features() []Stored {
	all := string(d.text)
	str := func(s span) string { return all[s.from:s.to] }
	tags := make([]string, len(d.tags))
	for i, s := range d.tags {
		tags[i] = str(s)
	}
	names := make([]string, 0, len(d.rows))
	out := make([]Stored, len(d.rows))
	for i := range d.rows {
		r := &d.rows[i]
		f := r.f
		f.Path, f.Module, f.Etag = str(r.path), str(r.module), str(r.etag)
		if r.hasName {
			names = append(names, str(r.name))
			f.Name = &names[len(names)-1]
		}
		f.Tags = tags[r.tagsFrom:r.tagsTo:r.tagsTo]
		out[i] = f
	}
	return out
}

// list runs ListFeatures with binary results.
func (s *Service) list(ctx context.Context, params db.ListFeaturesParams) ([]Stored, error) {
	rows, err := s.st.QueryBinary(ctx, "feature list", listOIDs[:], func(q *db.Queries) error {
		_, err := q.ListFeatures(ctx, params)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d := listDecoder{text: make([]byte, 0, 8<<10), rows: make([]listRow, 0, params.RowLimit)}
	for rows.Next() {
		if err := d.add(rows.RawValues()); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, store.Translate(err)
	}
	return d.features(), nil
}
