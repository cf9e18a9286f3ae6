package main

import (
	"fmt"
	"strconv"
	"strings"
)

// pointer is a parsed RFC 6901 JSON Pointer: its reference tokens, with
// ~1 and ~0 already turned back into / and ~. The empty pointer names the
// whole document.
type pointer []string

// parsePointer parses s, as written in the model's arguments.
func parsePointer(s string) (pointer, error) {
	if s == "" {
		return pointer{}, nil
	}
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("pointer %q must start with \"/\" (for example \"/scripts/test\"), or be \"\" for the whole document", s)
	}
	raw := strings.Split(s[1:], "/")
	p := make(pointer, len(raw))
	for i, tok := range raw {
		for j := 0; j < len(tok); j++ {
			if tok[j] == '~' && (j+1 == len(tok) || (tok[j+1] != '0' && tok[j+1] != '1')) {
				return nil, fmt.Errorf("pointer %q: %q is not an escape; write ~0 for ~ and ~1 for /", s, tok[j:min(j+2, len(tok))])
			}
		}
		// ~1 first, so "~01" is "~1" and not "/".
		p[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return p, nil
}

// String writes p back in pointer syntax.
func (p pointer) String() string {
	var b strings.Builder
	for _, tok := range p {
		b.WriteString("/")
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// where names the location p points at, for messages.
func (p pointer) where() string {
	if len(p) == 0 {
		return "the top level"
	}
	return p.String()
}

// lookup walks p down from root. On failure it returns how many tokens
// resolved and why the next one did not, worded for the model.
func lookup(root any, p pointer) (v any, resolved int, err error) {
	v = root
	for i, tok := range p {
		next, err := child(v, p[:i], tok)
		if err != nil {
			return nil, i, err
		}
		v = next
	}
	return v, len(p), nil
}

// child is the member or element tok of v, which sits at parent.
func child(v any, parent pointer, tok string) (any, error) {
	switch v := v.(type) {
	case *object:
		if i := v.index(tok); i >= 0 {
			return v.members[i].val, nil
		}
		if len(v.members) == 0 {
			return nil, fmt.Errorf("%s has no key %q: it is an empty object", parent.where(), tok)
		}
		return nil, fmt.Errorf("%s has no key %q; its keys are %s", parent.where(), tok, listKeys(v.keys()))
	case *array:
		i, err := arrayIndex(v, parent, tok)
		if err != nil {
			return nil, err
		}
		if i >= len(v.elems) {
			return nil, outOfRange(v, parent, tok)
		}
		return v.elems[i], nil
	}
	return nil, fmt.Errorf("%s is a %s, not an object or array, so it has no %q", parent.where(), kind(v), tok)
}

// arrayIndex parses tok as an index into a (RFC 6901: digits, no leading
// zeros). "-" is refused here: it names the slot after the last element,
// which only json_set can fill.
func arrayIndex(a *array, parent pointer, tok string) (int, error) {
	if tok == "-" {
		return 0, fmt.Errorf("%s has no element \"-\": \"-\" names the end of the array, which only json_set can append to", parent.where())
	}
	n, err := strconv.Atoi(tok)
	if err != nil || n < 0 || tok != strconv.Itoa(n) {
		return 0, fmt.Errorf("%s is an array, and %q is not an index: write digits without leading zeros (%s)", parent.where(), tok, indexRange(a))
	}
	return n, nil
}

// outOfRange says that index tok is past the end of a.
func outOfRange(a *array, parent pointer, tok string) error {
	return fmt.Errorf("%s has no index %s: %s", parent.where(), tok, indexRange(a))
}

// indexRange says which indexes a has.
func indexRange(a *array) string {
	switch n := len(a.elems); n {
	case 0:
		return "it is an empty array"
	case 1:
		return "it has 1 element, index 0"
	default:
		return fmt.Sprintf("it has %d elements, indexes 0 to %d", n, n-1)
	}
}

// listKeys quotes keys for a message, clipped to what a model needs to
// pick the one it meant.
func listKeys(keys []string) string {
	const maxKeys, maxChars = 20, 400
	var b strings.Builder
	for i, k := range keys {
		q := quote(k)
		if i == maxKeys || b.Len()+len(q) > maxChars {
			fmt.Fprintf(&b, " … and %d more", len(keys)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q)
	}
	return b.String()
}
