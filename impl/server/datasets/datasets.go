// Package datasets reads uploaded CSV and JSON datasets into typed tables: the columns with their
// detected types and the rows as JSON scalars. The runner feeds these rows to Scenario Outlines.
package datasets

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Column types, equal to the ColumnType enum of openapi/server.yaml.
const (
	TypeString   = "string"
	TypeInteger  = "integer"
	TypeNumber   = "number"
	TypeBoolean  = "boolean"
	TypeDate     = "date"
	TypeDatetime = "datetime"
	TypeNull     = "null"
)

// Limits on a dataset's shape, whatever its size in bytes: a wide or huge-celled file costs
// memory and time in every run and preview that reads it (docs/projects.md).
const (
	// MaxColumns is the most columns a dataset may have.
	MaxColumns = 256
	// MaxCellBytes is the largest cell (or column name) in bytes.
	MaxCellBytes = 64 << 10
)

func tooManyColumns(line int) error {
	return &Error{Line: line, Message: fmt.Sprintf("the dataset has more than %d columns; split it into several datasets", MaxColumns)}
}

func cellTooLarge(line int, column string, n int) error {
	return &Error{Line: line, Message: fmt.Sprintf("a cell of column %.64q has %d bytes; a cell holds at most %d bytes", column, n, MaxCellBytes)}
}

// Column is a named, typed column.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Table is a parsed dataset: each row has one cell per column (string, int64, float64, bool or nil).
type Table struct {
	Format  string
	Columns []Column
	Rows    [][]any
}

// Error is content that is not a valid dataset; Line is 1-based when known.
type Error struct {
	Line    int
	Message string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// DetectFormat returns csv or json from an explicit format, the file name, or the content.
func DetectFormat(explicit, filename string, content []byte) string {
	if explicit != "" {
		return explicit
	}
	lower := strings.ToLower(filename)
	switch {
	case strings.HasSuffix(lower, ".json"):
		return "json"
	case strings.HasSuffix(lower, ".csv"):
		return "csv"
	}
	if t := bytes.TrimSpace(content); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		return "json"
	}
	return "csv"
}

// Parse reads content in format (csv with a header row, or json: an array of flat objects) and
// types its columns.
func Parse(format string, content []byte) (*Table, error) {
	if !utf8.Valid(content) {
		return nil, &Error{Message: "the dataset is not UTF-8 text"}
	}
	var t *Table
	var err error
	switch format {
	case "csv":
		t, err = parseCSV(content)
	case "json":
		t, err = parseJSON(content)
	default:
		return nil, &Error{Message: fmt.Sprintf("unknown format %q: use csv or json", format)}
	}
	if err != nil {
		return nil, err
	}
	t.Format = format
	typeColumns(t, format == "csv")
	return t, nil
}

func parseCSV(content []byte) (*Table, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(content, []byte("\ufeff"))))
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, &Error{Line: 1, Message: "the CSV file has no header row"}
	}
	if err != nil {
		return nil, csvError(err)
	}
	if len(header) > MaxColumns {
		return nil, tooManyColumns(1)
	}
	t := &Table{}
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if len(h) > MaxCellBytes {
			return nil, cellTooLarge(1, h, len(h))
		}
		if h == "" {
			return nil, &Error{Line: 1, Message: fmt.Sprintf("column %d has no name", i+1)}
		}
		if seen[h] {
			return nil, &Error{Line: 1, Message: fmt.Sprintf("column %q appears twice", h)}
		}
		seen[h] = true
		t.Columns = append(t.Columns, Column{Name: h})
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		row := make([]any, len(rec))
		for i, v := range rec {
			if len(v) > MaxCellBytes {
				line, _ := r.FieldPos(i)
				return nil, cellTooLarge(line, t.Columns[i].Name, len(v))
			}
			row[i] = v
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{Line: pe.Line, Message: pe.Err.Error()}
	}
	return &Error{Message: err.Error()}
}

func parseJSON(content []byte) (*Table, error) {
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.UseNumber()
	line := func() int { return 1 + bytes.Count(content[:dec.InputOffset()], []byte("\n")) }
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return nil, &Error{Line: 1, Message: "a JSON dataset is an array of objects"}
	}
	t := &Table{}
	index := map[string]int{}
	for dec.More() {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, &Error{Line: line(), Message: "every element of a JSON dataset is an object"}
		}
		values := map[int]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, &Error{Line: line(), Message: "malformed JSON: " + err.Error()}
			}
			key := kt.(string)
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, &Error{Line: line(), Message: "malformed JSON: " + err.Error()}
			}
			if len(key) > MaxCellBytes || len(raw) > MaxCellBytes {
				return nil, cellTooLarge(line(), key, max(len(key), len(raw)))
			}
			v, err := scalar(raw)
			if err != nil {
				return nil, &Error{Line: line(), Message: fmt.Sprintf("member %q: %v", key, err)}
			}
			i, ok := index[key]
			if !ok {
				if len(t.Columns) == MaxColumns {
					return nil, tooManyColumns(line())
				}
				i = len(t.Columns)
				index[key] = i
				t.Columns = append(t.Columns, Column{Name: key})
			}
			values[i] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, &Error{Line: line(), Message: "malformed JSON: " + err.Error()}
		}
		row := make([]any, len(t.Columns))
		for i, v := range values {
			row[i] = v
		}
		t.Rows = append(t.Rows, row)
	}
	if _, err := dec.Token(); err != nil {
		return nil, &Error{Line: line(), Message: "malformed JSON: " + err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{Line: line(), Message: "unexpected content after the array"}
	}
	// Rows read before a column first appeared are shorter; pad them with nulls.
	for i, row := range t.Rows {
		for len(row) < len(t.Columns) {
			row = append(row, nil)
		}
		t.Rows[i] = row
	}
	return t, nil
}

func scalar(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s is out of range", x)
		}
		return f, nil
	}
	return nil, errors.New("values are JSON scalars (string, number, boolean or null), not objects or arrays")
}

// typeColumns gives each column the narrowest type all its non-empty values have; CSV cells are
// then converted to that type (empty cells become null).
func typeColumns(t *Table, fromText bool) {
	for c := range t.Columns {
		typ := ""
		for _, row := range t.Rows {
			typ = widen(typ, typeOf(row[c], fromText))
		}
		if typ == "" {
			typ = TypeNull
		}
		t.Columns[c].Type = typ
		if fromText {
			for _, row := range t.Rows {
				row[c] = convert(row[c].(string), typ)
			}
		}
	}
}

func typeOf(v any, fromText bool) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return TypeBoolean
	case int64:
		return TypeInteger
	case float64:
		return TypeNumber
	case string:
		if fromText {
			if x == "" {
				return ""
			}
			if _, err := strconv.ParseInt(x, 10, 64); err == nil {
				return TypeInteger
			}
			if f, err := strconv.ParseFloat(x, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return TypeNumber
			}
			if x == "true" || x == "false" {
				return TypeBoolean
			}
		}
		if _, err := time.Parse(time.DateOnly, x); err == nil {
			return TypeDate
		}
		if _, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return TypeDatetime
		}
		return TypeString
	}
	return TypeString
}

// widen returns the narrowest type holding values of both types ("" is no value yet).
func widen(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	case a == TypeInteger && b == TypeNumber, a == TypeNumber && b == TypeInteger:
		return TypeNumber
	case a == TypeDate && b == TypeDatetime, a == TypeDatetime && b == TypeDate:
		return TypeString
	}
	return TypeString
}

func convert(s, typ string) any {
	if s == "" && typ != TypeString {
		return nil
	}
	switch typ {
	case TypeInteger:
		i, _ := strconv.ParseInt(s, 10, 64)
		return i
	case TypeNumber:
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case TypeBoolean:
		return s == "true"
	}
	return s
}

// StringRows returns the rows as text, the way Scenario Outline examples hold them (null is "").
func (t *Table) StringRows() [][]string {
	out := make([][]string, len(t.Rows))
	for i, row := range t.Rows {
		out[i] = make([]string, len(row))
		for j, v := range row {
			switch x := v.(type) {
			case nil:
			case string:
				out[i][j] = x
			case float64:
				out[i][j] = strconv.FormatFloat(x, 'f', -1, 64)
			default:
				out[i][j] = fmt.Sprint(x)
			}
		}
	}
	return out
}
