package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A decoded JSON value keeps what a rewrite must preserve: the order of
// object keys and the literal text of numbers. It is one of nil (null),
// bool, string, json.Number, *object or *array.

// object is a JSON object with its members in file order. Duplicate keys
// are kept as written; lookups find the last, as JSON.parse does.
type object struct{ members []member }

type member struct {
	key string
	val any
}

// index is the position of the last member named key, or -1.
func (o *object) index(key string) int {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return i
		}
	}
	return -1
}

// keys lists the distinct keys in file order.
func (o *object) keys() []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range o.members {
		if !seen[m.key] {
			seen[m.key] = true
			keys = append(keys, m.key)
		}
	}
	return keys
}

// array is a JSON array; a pointer so json_set can append in place.
type array struct{ elems []any }

// kind names v's JSON type the way the model knows it.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case *object:
		return "object"
	case *array:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// decode parses one JSON document. A syntax error names the line and
// column of the offending character.
func decode(data []byte) (any, error) {
	// encoding/json's validator reports exact offsets; the token reader
	// below does not, so check the whole text first.
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, err
		}
		return nil, syntaxError(data, se)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return decodeValue(dec)
}

// syntaxError words se with the line and column it happened at.
func syntaxError(data []byte, se *json.SyntaxError) error {
	at := int(se.Offset) - 1 // the character the validator stopped on
	msg := se.Error()
	if int(se.Offset) >= len(data) && strings.Contains(msg, "unexpected end") {
		if len(bytes.TrimSpace(data)) == 0 {
			return errors.New("not JSON: the file is empty")
		}
		at = len(data) // the end: something is missing
		msg = "the JSON ends before it is complete (an unclosed bracket, brace or string?)"
	}
	at = max(at, 0)
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	col := at - bytes.LastIndexByte(data[:at], '\n')
	if at < len(data) && data[at] == '/' {
		msg += " (comments are not JSON)"
	}
	return fmt.Errorf("not JSON: line %d, column %d: %s", line, col, msg)
}

// decodeValue reads one value from dec, which holds valid JSON.
func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o.members = append(o.members, member{key: k.(string), val: v})
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		a := &array{elems: []any{}}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, v)
		}
		_, err := dec.Token() // ']'
		return a, err
	}
	return tok, nil
}

// format writes v the way JSON.stringify(v, null, indent) does, with nl
// between lines. An empty indent writes compact JSON on one line.
func format(v any, indent, nl string) string {
	var b strings.Builder
	f := formatter{w: &b, indent: indent, nl: nl}
	f.value(v, 0)
	return b.String()
}

type formatter struct {
	w          io.StringWriter
	indent, nl string
}

func (f formatter) value(v any, depth int) {
	switch v := v.(type) {
	case *object:
		if len(v.members) == 0 {
			f.w.WriteString("{}")
			return
		}
		f.w.WriteString("{")
		for i, m := range v.members {
			f.separator(i, depth+1)
			f.w.WriteString(quote(m.key))
			if f.indent == "" {
				f.w.WriteString(":")
			} else {
				f.w.WriteString(": ")
			}
			f.value(m.val, depth+1)
		}
		f.newline(depth)
		f.w.WriteString("}")
	case *array:
		if len(v.elems) == 0 {
			f.w.WriteString("[]")
			return
		}
		f.w.WriteString("[")
		for i, e := range v.elems {
			f.separator(i, depth+1)
			f.value(e, depth+1)
		}
		f.newline(depth)
		f.w.WriteString("]")
	case nil:
		f.w.WriteString("null")
	case bool:
		if v {
			f.w.WriteString("true")
		} else {
			f.w.WriteString("false")
		}
	case json.Number:
		f.w.WriteString(string(v))
	case string:
		f.w.WriteString(quote(v))
	}
}

// separator starts the i-th element of a container at depth.
func (f formatter) separator(i, depth int) {
	if i > 0 {
		f.w.WriteString(",")
	}
	f.newline(depth)
}

func (f formatter) newline(depth int) {
	if f.indent == "" {
		return
	}
	f.w.WriteString(f.nl)
	f.w.WriteString(strings.Repeat(f.indent, depth))
}

// quote writes s as a JSON string, leaving <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
