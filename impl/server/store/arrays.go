package store

import (
	"encoding/binary"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// registerArrays makes []string (text[]) and []time.Time (timestamptz[]) parameters encode in
// PostgreSQL's binary array format directly. pgx's array codec boxes each element in an interface
// and encodes it through the element's plan: a runner batch's arrays hold about 4,000 strings and
// 2,500 times a run, two allocations each (docs/benchmarks.md, runner round 5). Other values, and
// the text format, go to pgx's codec.
func registerArrays(m *pgtype.Map) {
	for _, oid := range []uint32{pgtype.TextArrayOID, pgtype.TimestamptzArrayOID} {
		t, ok := m.TypeForOID(oid)
		if !ok {
			continue
		}
		m.RegisterType(&pgtype.Type{Name: t.Name, OID: oid, Codec: &flatArrayCodec{Codec: t.Codec}})
	}
}

type flatArrayCodec struct{ pgtype.Codec }

func (c *flatArrayCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if format == pgtype.BinaryFormatCode {
		switch value.(type) {
		case []string:
			if oid == pgtype.TextArrayOID {
				return stringArrayPlan{}
			}
		case []time.Time:
			if oid == pgtype.TimestamptzArrayOID {
				return timeArrayPlan{}
			}
		}
	}
	return c.Codec.PlanEncode(m, oid, format, value)
}

// appendArrayHeader appends a one-dimensional array's header without NULLs, as pgx writes it (an
// empty array has one dimension of length 0).
func appendArrayHeader(buf []byte, elementOID uint32, n int) []byte {
	buf = binary.BigEndian.AppendUint32(buf, 1) // dimensions
	buf = binary.BigEndian.AppendUint32(buf, 0) // no NULL element
	buf = binary.BigEndian.AppendUint32(buf, elementOID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return binary.BigEndian.AppendUint32(buf, 1) // lower bound
}

type stringArrayPlan struct{}

func (stringArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	a := value.([]string)
	if a == nil {
		return nil, nil // NULL
	}
	size := 20
	for _, s := range a {
		size += 4 + len(s)
	}
	buf = grow(buf, size)
	buf = appendArrayHeader(buf, pgtype.TextOID, len(a))
	for _, s := range a {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
		buf = append(buf, s...)
	}
	return buf, nil
}

// microsecFromUnixEpochToY2K is PostgreSQL's epoch (2000-01-01) in Unix microseconds.
const microsecFromUnixEpochToY2K = 946_684_800 * 1_000_000

type timeArrayPlan struct{}

func (timeArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	a := value.([]time.Time)
	if a == nil {
		return nil, nil // NULL
	}
	buf = grow(buf, 20+12*len(a))
	buf = appendArrayHeader(buf, pgtype.TimestamptzOID, len(a))
	for _, t := range a {
		// As pgx's timestamptz codec: microseconds since 2000-01-01, truncated.
		us := t.Unix()*1_000_000 + int64(t.Nanosecond())/1000 - microsecFromUnixEpochToY2K
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(us))
	}
	return buf, nil
}

// grow makes room for n more bytes at once (pgx starts each statement's parameters in a small
// buffer: element by element it would grow, and copy, many times).
func grow(buf []byte, n int) []byte {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	out := make([]byte, len(buf), len(buf)+n+len(buf)/4)
	copy(out, buf)
	return out
}
