package yamlrules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// ReadJSON reads a JSON source, recording the position of every pointer (the member name for
// object members) and every number literal. Malformed JSON is YAML_INVALID with its position.
// YAML portability does not apply to JSON, so Lint reports only NUMBER_NOT_PORTABLE.
func ReadJSON(src []byte) (*Document, []Problem) {
	j := &jreader{src: src, dec: json.NewDecoder(bytes.NewReader(src)), doc: &Document{positions: map[string]Position{}}}
	j.dec.UseNumber()
	if err := j.value("", 0); err != nil {
		p := j.position(int(j.dec.InputOffset()))
		return nil, []Problem{{Code: CodeYAMLInvalid, Line: p.Line, Column: p.Column, Message: "malformed JSON: " + err.Error()}}
	}
	if _, err := j.dec.Token(); err != io.EOF {
		p := j.position(int(j.dec.InputOffset()))
		return nil, []Problem{{Code: CodeYAMLInvalid, Line: p.Line, Column: p.Column, Message: "malformed JSON: unexpected data after the document"}}
	}
	j.doc.JSON = src
	return j.doc, nil
}

type jreader struct {
	src   []byte
	dec   *json.Decoder
	doc   *Document
	lines []int // offsets where lines start
}

// next returns the offset of the next token: white space, ',' and ':' skipped.
func (j *jreader) next() int {
	i := int(j.dec.InputOffset())
	for i < len(j.src) {
		switch j.src[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
			continue
		}
		break
	}
	return i
}

func (j *jreader) position(off int) Position {
	if off > len(j.src) {
		off = len(j.src)
	}
	if j.lines == nil {
		j.lines = []int{0}
		for i, c := range j.src {
			if c == '\n' {
				j.lines = append(j.lines, i+1)
			}
		}
	}
	line := sort.SearchInts(j.lines, off+1) - 1
	return Position{Line: line + 1, Column: off - j.lines[line] + 1}
}

func (j *jreader) value(ptr string, depth int) error {
	if depth > 10000 {
		return fmt.Errorf("nested too deep")
	}
	at := j.next()
	tok, err := j.dec.Token()
	if err != nil {
		return err
	}
	if _, ok := j.doc.positions[ptr]; !ok {
		j.doc.positions[ptr] = j.position(at)
	}
	switch t := tok.(type) {
	case json.Number:
		j.doc.numbers = append(j.doc.numbers, number{ptr: ptr, text: string(t), pos: j.position(at)})
	case json.Delim:
		switch t {
		case '[':
			for i := 0; j.dec.More(); i++ {
				if err := j.value(ptr+"/"+strconv.Itoa(i), depth+1); err != nil {
					return err
				}
			}
			_, err := j.dec.Token()
			return err
		case '{':
			for j.dec.More() {
				kat := j.next()
				kt, err := j.dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				mp := ptr + "/" + escape(key)
				if _, ok := j.doc.positions[mp]; !ok {
					j.doc.positions[mp] = j.position(kat)
				}
				if err := j.value(mp, depth+1); err != nil {
					return err
				}
			}
			_, err := j.dec.Token()
			return err
		}
	}
	return nil
}
