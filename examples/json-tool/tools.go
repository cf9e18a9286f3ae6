package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/wasm"
)

// tools maps each tool this module serves to its function. It needs
// neither the clock nor randomness (a temporary file's name only has to be
// unique, and the create retries on a clash), so plugin.hcl grants none.
func tools() map[string]wasm.Func {
	return map[string]wasm.Func{"json_get": jsonGet, "json_set": jsonSet}
}

// maxGetOutput bounds what json_get returns: a model rarely needs more,
// and the host fails a call whose output passes its cap.
const maxGetOutput = 64 << 10

type getArgs struct {
	Path    string `json:"path"`
	Pointer string `json:"pointer"`
}

// jsonGet is the json_get tool: the value at a pointer, pretty-printed.
func jsonGet(req wasm.Request) (string, error) {
	var a getArgs
	if err := req.Decode(&a); err != nil {
		return "", err
	}
	p, err := parsePointer(a.Pointer)
	if err != nil {
		return "", err
	}
	f, err := readJSONFile(req.Workspace, a.Path)
	if err != nil {
		return "", err
	}
	v, _, err := lookup(f.root, p)
	if err != nil {
		return "", fmt.Errorf("%s: %s not found: %w", f.rel, a.Pointer, err)
	}
	return clip(format(v, "  ", "\n"), maxGetOutput), nil
}

// clip cuts s to at most n bytes at a line end and says so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], '\n')
	if cut < 0 {
		cut = n
	}
	return fmt.Sprintf("%s\n[clipped: the value is %d bytes of JSON; ask for a pointer inside it]", s[:cut], len(s))
}

type setArgs struct {
	Path    string          `json:"path"`
	Pointer string          `json:"pointer"`
	Value   json.RawMessage `json:"value"`
}

// jsonSet is the json_set tool: it sets the value at a pointer and writes
// the file back in its own layout.
func jsonSet(req wasm.Request) (string, error) {
	var a setArgs
	if err := req.Decode(&a); err != nil {
		return "", err
	}
	if len(bytes.TrimSpace(a.Value)) == 0 {
		return "", errors.New(`value is required: any JSON, such as "1.2.0", 3, true, null or {"key": "value"}`)
	}
	value, err := decode(a.Value)
	if err != nil {
		return "", fmt.Errorf("value: %w", err)
	}
	p, err := parsePointer(a.Pointer)
	if err != nil {
		return "", err
	}
	f, err := readJSONFile(req.Workspace, a.Path)
	if err != nil {
		return "", err
	}
	ch, err := set(f, p, value)
	if err != nil {
		return "", fmt.Errorf("%s: cannot set %s: %w", f.rel, displayPointer(a.Pointer), err)
	}
	if ch.old != nil && *ch.old == ch.new {
		return fmt.Sprintf("%s in %s is already %s; nothing written", displayPointer(a.Pointer), f.rel, short(ch.new)), nil
	}
	if err := f.write(); err != nil {
		return "", err
	}
	switch {
	case ch.appended >= 0:
		at := append(p[:len(p)-1:len(p)-1], fmt.Sprint(ch.appended))
		return fmt.Sprintf("appended %s in %s: %s", at, f.rel, short(ch.new)), nil
	case ch.old == nil:
		return fmt.Sprintf("added %s in %s: %s", displayPointer(a.Pointer), f.rel, short(ch.new)), nil
	}
	return fmt.Sprintf("set %s in %s: %s → %s", displayPointer(a.Pointer), f.rel, short(*ch.old), short(ch.new)), nil
}

// change describes what set did, each value as compact JSON.
type change struct {
	// old is the replaced value; nil when a key was added or an element
	// appended.
	old *string
	new string
	// appended is the index of an element appended with "-", or -1.
	appended int
}

// set puts value at p in f's document. The parent of the last token must
// exist: a missing parent is an error naming it, never created silently.
func set(f *jsonFile, p pointer, value any) (change, error) {
	ch := change{new: compact(value), appended: -1}
	if len(p) == 0 {
		old := compact(f.root)
		ch.old, f.root = &old, value
		return ch, nil
	}
	parentPtr, last := p[:len(p)-1], p[len(p)-1]
	parent, resolved, err := lookup(f.root, parentPtr)
	if err != nil {
		missing := parentPtr[:resolved+1]
		err = fmt.Errorf("its parent %s does not exist (%w)", missing, err)
		// A missing key could be set first; anything else is a wrong path.
		if holder, _, _ := lookup(f.root, parentPtr[:resolved]); kind(holder) == "object" {
			err = fmt.Errorf("%w; json_set creates no intermediate objects, so set %s first", err, missing)
		}
		return ch, err
	}
	switch parent := parent.(type) {
	case *object:
		if i := parent.index(last); i >= 0 {
			old := compact(parent.members[i].val)
			ch.old, parent.members[i].val = &old, value
			return ch, nil
		}
		parent.members = append(parent.members, member{key: last, val: value})
		return ch, nil
	case *array:
		if last == "-" {
			ch.appended = len(parent.elems)
			parent.elems = append(parent.elems, value)
			return ch, nil
		}
		i, err := arrayIndex(parent, parentPtr, last)
		if err != nil {
			return ch, err
		}
		if i >= len(parent.elems) {
			return ch, fmt.Errorf("%w (to append, use %s)", outOfRange(parent, parentPtr, last), append(parentPtr[:len(parentPtr):len(parentPtr)], "-"))
		}
		old := compact(parent.elems[i])
		ch.old, parent.elems[i] = &old, value
		return ch, nil
	}
	return ch, fmt.Errorf("%s is a %s, not an object or array, so it can hold no %q", parentPtr.where(), kind(parent), last)
}

// compact is v as JSON on one line.
func compact(v any) string { return format(v, "", "") }

// short clips compact JSON for a one-line summary.
func short(s string) string {
	const maxRunes = 80
	if r := []rune(s); len(r) > maxRunes {
		return string(r[:maxRunes-1]) + "…"
	}
	return s
}

// displayPointer shows a pointer in messages; "" needs a word.
func displayPointer(s string) string {
	if s == "" {
		return `"" (the whole document)`
	}
	return s
}
