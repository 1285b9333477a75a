// Package jsonv decodes JSON into a tree that keeps member order and duplicate members, so the
// compiler can report duplicates and point at every problem with a JSON pointer. Numbers keep
// their text; the compiler decides what they mean.
package jsonv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

// Kind is the JSON type of a node.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Node is one JSON value.
type Node struct {
	Kind    Kind
	Bool    bool
	Text    string // the number text or the string value
	Items   []*Node
	Members []Member
}

// Member is one object member, in document order; duplicates are kept.
type Member struct {
	Key   string
	Value *Node
}

// Get returns the first member named key, or nil.
func (n *Node) Get(key string) *Node {
	for _, m := range n.Members {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// MaxDepth bounds the nesting Decode accepts, so hostile input cannot exhaust the stack.
const MaxDepth = 10000

// Decode parses exactly one JSON value (surrounding white space allowed). A text CheckText
// refuses is malformed.
func Decode(data []byte) (*Node, error) {
	if err := CheckText(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the value")
	}
	return n, nil
}

func decode(dec *json.Decoder, depth int) (*Node, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("nested deeper than %d", MaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of JSON input")
		}
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &Node{Kind: Null}, nil
	case bool:
		return &Node{Kind: Bool, Bool: t}, nil
	case json.Number:
		return &Node{Kind: Number, Text: string(t)}, nil
	case string:
		return &Node{Kind: String, Text: t}, nil
	case json.Delim:
		switch t {
		case '[':
			n := &Node{Kind: Array, Items: []*Node{}}
			for dec.More() {
				item, err := decode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Items = append(n.Items, item)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '{':
			n := &Node{Kind: Object, Members: []Member{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := decode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Members = append(n.Members, Member{Key: key, Value: v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// FromValue converts a decoded Go value (nil, bool, float64, int, int64, json.Number, string,
// []any, map[string]any) into a tree; object members are put in key order since a map has none.
func FromValue(v any) (*Node, error) {
	return fromValue(v, 0)
}

func fromValue(v any, depth int) (*Node, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("nested deeper than %d", MaxDepth)
	}
	switch t := v.(type) {
	case nil:
		return &Node{Kind: Null}, nil
	case bool:
		return &Node{Kind: Bool, Bool: t}, nil
	case json.Number:
		return &Node{Kind: Number, Text: string(t)}, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, errors.New("a number is not finite")
		}
		return &Node{Kind: Number, Text: strconv.FormatFloat(t, 'g', -1, 64)}, nil
	case int:
		return &Node{Kind: Number, Text: strconv.Itoa(t)}, nil
	case int64:
		return &Node{Kind: Number, Text: strconv.FormatInt(t, 10)}, nil
	case string:
		return &Node{Kind: String, Text: t}, nil
	case []any:
		n := &Node{Kind: Array, Items: make([]*Node, len(t))}
		for i, x := range t {
			c, err := fromValue(x, depth+1)
			if err != nil {
				return nil, err
			}
			n.Items[i] = c
		}
		return n, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		n := &Node{Kind: Object, Members: make([]Member, len(keys))}
		for i, k := range keys {
			c, err := fromValue(t[k], depth+1)
			if err != nil {
				return nil, err
			}
			n.Members[i] = Member{Key: k, Value: c}
		}
		return n, nil
	}
	return nil, fmt.Errorf("unsupported Go type %T", v)
}
