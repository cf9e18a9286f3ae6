package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/wasm"
)

// call runs one request through the module's dispatch, as the host does,
// and returns the response the model would see.
func call(t *testing.T, workspace, tool, args string) wasm.Response {
	t.Helper()
	req, err := json.Marshal(wasm.Request{Tool: tool, Args: json.RawMessage(args), Workspace: workspace})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := wasm.HandleTools(bytes.NewReader(req), &out, tools()); err != nil {
		t.Fatal(err)
	}
	var resp wasm.Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	return resp
}

// workspace is a temporary workspace holding files.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const packageJSON = `{
  "name": "demo",
  "version": "1.0.0",
  "scripts": {
    "build": "tsc",
    "test": "vitest run"
  },
  "files": ["dist", "lib"],
  "weight": 1.50,
  "big": 1e3,
  "a/b": "slash",
  "m~n": "tilde",
  "html": "<a&b>",
  "empty": {},
  "none": [],
  "private": true,
  "main": null
}
`

func TestJSONGet(t *testing.T) {
	var keys []string
	for i := range 30 {
		keys = append(keys, `"key`+string(rune('a'+i%26))+string(rune('a'+i/26))+`": 0`)
	}
	manyKeys := "{" + strings.Join(keys, ", ") + "}"
	ws := workspace(t, map[string]string{
		"package.json":        packageJSON,
		"sub/dir/data.json":   `[{"id": 7}]`,
		"many.json":           manyKeys,
		"trailing-comma.json": "{\n  \"a\": 1,\n}\n",
		"missing-colon.json":  "{\n  \"a\": 1,\n  \"b\" 2\n}\n",
		"truncated.json":      `{"a": [1, 2`,
		"comments.json":       "// settings\n{}\n",
		"two-values.json":     `{"a": 1} {"b": 2}`,
		"empty.json":          "",
		"blank.json":          " \n",
		"bom.json":            "\xef\xbb\xbf{\"ok\": true}",
	})
	tests := []struct {
		name, args string
		want       wasm.Response
	}{
		// Values.
		{"a string shows as a JSON string", `{"path": "package.json", "pointer": "/scripts/test"}`, wasm.Response{Output: `"vitest run"`}},
		{"an object keeps its key order", `{"path": "package.json", "pointer": "/scripts"}`,
			wasm.Response{Output: "{\n  \"build\": \"tsc\",\n  \"test\": \"vitest run\"\n}"}},
		{"an array element", `{"path": "package.json", "pointer": "/files/1"}`, wasm.Response{Output: `"lib"`}},
		{"a number keeps its literal", `{"path": "package.json", "pointer": "/weight"}`, wasm.Response{Output: `1.50`}},
		{"an exponent keeps its literal", `{"path": "package.json", "pointer": "/big"}`, wasm.Response{Output: `1e3`}},
		{"true", `{"path": "package.json", "pointer": "/private"}`, wasm.Response{Output: `true`}},
		{"null", `{"path": "package.json", "pointer": "/main"}`, wasm.Response{Output: `null`}},
		{"empty object", `{"path": "package.json", "pointer": "/empty"}`, wasm.Response{Output: `{}`}},
		{"empty array", `{"path": "package.json", "pointer": "/none"}`, wasm.Response{Output: `[]`}},
		{"~1 is a slash in a key", `{"path": "package.json", "pointer": "/a~1b"}`, wasm.Response{Output: `"slash"`}},
		{"~0 is a tilde in a key", `{"path": "package.json", "pointer": "/m~0n"}`, wasm.Response{Output: `"tilde"`}},
		{"html characters are not escaped", `{"path": "package.json", "pointer": "/html"}`, wasm.Response{Output: `"<a&b>"`}},
		{"the empty pointer is the whole document", `{"path": "sub/dir/data.json", "pointer": ""}`,
			wasm.Response{Output: "[\n  {\n    \"id\": 7\n  }\n]"}},
		{"a byte order mark is skipped", `{"path": "bom.json", "pointer": "/ok"}`, wasm.Response{Output: `true`}},
		{"a path with ./ and .. inside the workspace", `{"path": "./sub/../sub/dir/data.json", "pointer": "/0/id"}`, wasm.Response{Output: `7`}},

		// Pointers that name nothing.
		{"a missing key lists the keys there", `{"path": "package.json", "pointer": "/scripts/tst"}`,
			wasm.Response{Error: `package.json: /scripts/tst not found: /scripts has no key "tst"; its keys are "build", "test"`}},
		{"a missing top-level key", `{"path": "package.json", "pointer": "/nmae"}`,
			wasm.Response{Error: `package.json: /nmae not found: the top level has no key "nmae"; its keys are "name", "version", "scripts", "files", "weight", "big", "a/b", "m~n", "html", "empty", "none", "private", "main"`}},
		{"the key list is clipped", `{"path": "many.json", "pointer": "/nope"}`,
			wasm.Response{Error: `many.json: /nope not found: the top level has no key "nope"; its keys are "keyaa", "keyba", "keyca", "keyda", "keyea", "keyfa", "keyga", "keyha", "keyia", "keyja", "keyka", "keyla", "keyma", "keyna", "keyoa", "keypa", "keyqa", "keyra", "keysa", "keyta" … and 10 more`}},
		{"an empty object", `{"path": "package.json", "pointer": "/empty/x"}`,
			wasm.Response{Error: `package.json: /empty/x not found: /empty has no key "x": it is an empty object`}},
		{"an index out of range", `{"path": "package.json", "pointer": "/files/2"}`,
			wasm.Response{Error: `package.json: /files/2 not found: /files has no index 2: it has 2 elements, indexes 0 to 1`}},
		{"an index into an empty array", `{"path": "package.json", "pointer": "/none/0"}`,
			wasm.Response{Error: `package.json: /none/0 not found: /none has no index 0: it is an empty array`}},
		{"a leading zero is not an index", `{"path": "package.json", "pointer": "/files/01"}`,
			wasm.Response{Error: `package.json: /files/01 not found: /files is an array, and "01" is not an index: write digits without leading zeros (it has 2 elements, indexes 0 to 1)`}},
		{"a key is not an index", `{"path": "package.json", "pointer": "/files/name"}`,
			wasm.Response{Error: `package.json: /files/name not found: /files is an array, and "name" is not an index: write digits without leading zeros (it has 2 elements, indexes 0 to 1)`}},
		{"- is for json_set", `{"path": "package.json", "pointer": "/files/-"}`,
			wasm.Response{Error: `package.json: /files/- not found: /files has no element "-": "-" names the end of the array, which only json_set can append to`}},
		{"into a scalar", `{"path": "package.json", "pointer": "/version/major"}`,
			wasm.Response{Error: `package.json: /version/major not found: /version is a string, not an object or array, so it has no "major"`}},
		{"no leading slash", `{"path": "package.json", "pointer": "scripts/test"}`,
			wasm.Response{Error: `pointer "scripts/test" must start with "/" (for example "/scripts/test"), or be "" for the whole document`}},
		{"a bad escape", `{"path": "package.json", "pointer": "/a~2b"}`,
			wasm.Response{Error: `pointer "/a~2b": "~2" is not an escape; write ~0 for ~ and ~1 for /`}},
		{"a lone tilde", `{"path": "package.json", "pointer": "/a~"}`,
			wasm.Response{Error: `pointer "/a~": "~" is not an escape; write ~0 for ~ and ~1 for /`}},

		// Files that cannot be read as JSON.
		{"a missing file", `{"path": "nope.json", "pointer": ""}`, wasm.Response{Error: `nope.json does not exist in the workspace`}},
		{"a directory", `{"path": "sub/dir", "pointer": ""}`, wasm.Response{Error: `sub/dir is a directory, not a JSON file`}},
		{"a trailing comma", `{"path": "trailing-comma.json", "pointer": ""}`,
			wasm.Response{Error: `trailing-comma.json: not JSON: line 3, column 1: invalid character '}' looking for beginning of object key string`}},
		{"a missing colon", `{"path": "missing-colon.json", "pointer": "/a"}`,
			wasm.Response{Error: `missing-colon.json: not JSON: line 3, column 7: invalid character '2' after object key`}},
		{"truncated", `{"path": "truncated.json", "pointer": "/a"}`,
			wasm.Response{Error: `truncated.json: not JSON: line 1, column 12: the JSON ends before it is complete (an unclosed bracket, brace or string?)`}},
		{"comments", `{"path": "comments.json", "pointer": ""}`,
			wasm.Response{Error: `comments.json: not JSON: line 1, column 1: invalid character '/' looking for beginning of value (comments are not JSON)`}},
		{"two values", `{"path": "two-values.json", "pointer": ""}`,
			wasm.Response{Error: `two-values.json: not JSON: line 1, column 10: invalid character '{' after top-level value`}},
		{"an empty file", `{"path": "empty.json", "pointer": ""}`, wasm.Response{Error: `empty.json: not JSON: the file is empty`}},
		{"a blank file", `{"path": "blank.json", "pointer": ""}`, wasm.Response{Error: `blank.json: not JSON: the file is empty`}},

		// Arguments.
		{"no path", `{"pointer": "/a"}`, wasm.Response{Error: `path is required: a JSON file relative to the workspace, such as "package.json"`}},
		{"an absolute path", `{"path": "/etc/passwd", "pointer": ""}`,
			wasm.Response{Error: `path "/etc/passwd" is absolute; give it relative to the workspace, such as "package.json"`}},
		{"a path leaving the workspace", `{"path": "../secrets.json", "pointer": ""}`,
			wasm.Response{Error: `path "../secrets.json" leaves the workspace; give a path inside it`}},
		{"a path leaving through a subdirectory", `{"path": "sub/../../x.json", "pointer": ""}`,
			wasm.Response{Error: `path "sub/../../x.json" leaves the workspace; give a path inside it`}},
		{"a misspelt argument", `{"path": "package.json", "pointr": "/name"}`,
			wasm.Response{Error: `arguments: json: unknown field "pointr"`}},
		{"json_get takes no value", `{"path": "package.json", "pointer": "/name", "value": 1}`,
			wasm.Response{Error: `arguments: json: unknown field "value"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := call(t, ws, "json_get", tc.args); got != tc.want {
				t.Errorf("json_get %s\n got %+v\nwant %+v", tc.args, got, tc.want)
			}
		})
	}
}

func TestJSONGetNoWorkspace(t *testing.T) {
	got := call(t, "", "json_get", `{"path": "package.json", "pointer": ""}`)
	if want := "this call has no workspace, so there are no files to read"; got.Error != want {
		t.Errorf("error = %q, want %q", got.Error, want)
	}
}

// A huge value is clipped at a line end, with a note, so the call stays
// under the host's output cap and the model learns to narrow the pointer.
func TestJSONGetClipsHugeValues(t *testing.T) {
	elems := make([]string, 20000)
	for i := range elems {
		elems[i] = `"element"`
	}
	ws := workspace(t, map[string]string{"big.json": "[" + strings.Join(elems, ",") + "]"})
	got := call(t, ws, "json_get", `{"path": "big.json", "pointer": ""}`)
	if got.Error != "" {
		t.Fatal(got.Error)
	}
	body, note, ok := strings.Cut(got.Output, "\n[clipped: ")
	if !ok || note != "the value is 260002 bytes of JSON; ask for a pointer inside it]" {
		t.Errorf("output ends %q, want the clipped note", got.Output[max(0, len(got.Output)-120):])
	}
	if len(body) > maxGetOutput || !strings.HasSuffix(body, `"element",`) {
		t.Errorf("clipped body is %d bytes ending %q, want at most %d ending at a line end", len(body), body[len(body)-20:], maxGetOutput)
	}
}

func TestJSONSet(t *testing.T) {
	tests := []struct {
		name       string
		file, args string
		// want is the output; wantFile the file afterwards (unchanged
		// when empty).
		want     wasm.Response
		wantFile string
	}{
		{name: "replace a string, keeping order, indentation and the final newline",
			file:     "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\",\n  \"private\": true\n}\n",
			args:     `{"path": "f.json", "pointer": "/version", "value": "1.1.0"}`,
			want:     wasm.Response{Output: `set /version in f.json: "1.0.0" → "1.1.0"`},
			wantFile: "{\n  \"name\": \"demo\",\n  \"version\": \"1.1.0\",\n  \"private\": true\n}\n"},
		{name: "four spaces",
			file:     "{\n    \"a\": {\n        \"b\": 1\n    }\n}\n",
			args:     `{"path": "f.json", "pointer": "/a/b", "value": [1, {"c": null}]}`,
			want:     wasm.Response{Output: `set /a/b in f.json: 1 → [1,{"c":null}]`},
			wantFile: "{\n    \"a\": {\n        \"b\": [\n            1,\n            {\n                \"c\": null\n            }\n        ]\n    }\n}\n"},
		{name: "tabs",
			file:     "{\n\t\"a\": 1,\n\t\"b\": 2\n}\n",
			args:     `{"path": "f.json", "pointer": "/a", "value": {"x": true}}`,
			want:     wasm.Response{Output: `set /a in f.json: 1 → {"x":true}`},
			wantFile: "{\n\t\"a\": {\n\t\t\"x\": true\n\t},\n\t\"b\": 2\n}\n"},
		{name: "no final newline stays so",
			file:     "{\n  \"a\": 1\n}",
			args:     `{"path": "f.json", "pointer": "/a", "value": 2}`,
			want:     wasm.Response{Output: `set /a in f.json: 1 → 2`},
			wantFile: "{\n  \"a\": 2\n}"},
		{name: "CRLF line endings stay so",
			file:     "{\r\n  \"a\": 1\r\n}\r\n",
			args:     `{"path": "f.json", "pointer": "/b", "value": "x"}`,
			want:     wasm.Response{Output: `added /b in f.json: "x"`},
			wantFile: "{\r\n  \"a\": 1,\r\n  \"b\": \"x\"\r\n}\r\n"},
		{name: "a one-line file gets two spaces",
			file:     `{"a":1}`,
			args:     `{"path": "f.json", "pointer": "/a", "value": 2}`,
			want:     wasm.Response{Output: `set /a in f.json: 1 → 2`},
			wantFile: "{\n  \"a\": 2\n}"},
		{name: "a byte order mark stays",
			file:     "\xef\xbb\xbf{\n  \"a\": 1\n}\n",
			args:     `{"path": "f.json", "pointer": "/a", "value": 2}`,
			want:     wasm.Response{Output: `set /a in f.json: 1 → 2`},
			wantFile: "\xef\xbb\xbf{\n  \"a\": 2\n}\n"},
		{name: "a new key goes last",
			file:     "{\n  \"scripts\": {\n    \"test\": \"vitest\"\n  },\n  \"z\": 0\n}\n",
			args:     `{"path": "f.json", "pointer": "/scripts/lint", "value": "eslint ."}`,
			want:     wasm.Response{Output: `added /scripts/lint in f.json: "eslint ."`},
			wantFile: "{\n  \"scripts\": {\n    \"test\": \"vitest\",\n    \"lint\": \"eslint .\"\n  },\n  \"z\": 0\n}\n"},
		{name: "a key into an empty object",
			file:     "{\n  \"e\": {}\n}\n",
			args:     `{"path": "f.json", "pointer": "/e/k", "value": 1}`,
			want:     wasm.Response{Output: `added /e/k in f.json: 1`},
			wantFile: "{\n  \"e\": {\n    \"k\": 1\n  }\n}\n"},
		{name: "- appends to an array",
			file:     "{\n  \"files\": [\n    \"dist\"\n  ]\n}\n",
			args:     `{"path": "f.json", "pointer": "/files/-", "value": "lib"}`,
			want:     wasm.Response{Output: `appended /files/1 in f.json: "lib"`},
			wantFile: "{\n  \"files\": [\n    \"dist\",\n    \"lib\"\n  ]\n}\n"},
		{name: "- appends to an empty array",
			file:     "[]\n",
			args:     `{"path": "f.json", "pointer": "/-", "value": 1}`,
			want:     wasm.Response{Output: `appended /0 in f.json: 1`},
			wantFile: "[\n  1\n]\n"},
		{name: "replace an array element",
			file:     "[\n  1,\n  2\n]\n",
			args:     `{"path": "f.json", "pointer": "/1", "value": null}`,
			want:     wasm.Response{Output: `set /1 in f.json: 2 → null`},
			wantFile: "[\n  1,\n  null\n]\n"},
		{name: "the whole document",
			file:     "{\n  \"a\": 1\n}\n",
			args:     `{"path": "f.json", "pointer": "", "value": {"b": 2}}`,
			want:     wasm.Response{Output: `set "" (the whole document) in f.json: {"a":1} → {"b":2}`},
			wantFile: "{\n  \"b\": 2\n}\n"},
		{name: "the rest of the file is kept: numbers, escapes-free text, html characters, order",
			file:     "{\n  \"z\": 1.50,\n  \"y\": 1e3,\n  \"x\": \"<a&b> é\",\n  \"w\": []\n}\n",
			args:     `{"path": "f.json", "pointer": "/y", "value": 2e3}`,
			want:     wasm.Response{Output: `set /y in f.json: 1e3 → 2e3`},
			wantFile: "{\n  \"z\": 1.50,\n  \"y\": 2e3,\n  \"x\": \"<a&b> é\",\n  \"w\": []\n}\n"},
		{name: "a long value is clipped in the summary, not in the file",
			file:     "{\n  \"a\": 1\n}\n",
			args:     `{"path": "f.json", "pointer": "/a", "value": "` + strings.Repeat("x", 100) + `"}`,
			want:     wasm.Response{Output: `set /a in f.json: 1 → "` + strings.Repeat("x", 78) + `…`},
			wantFile: "{\n  \"a\": \"" + strings.Repeat("x", 100) + "\"\n}\n"},

		// Refusals leave the file alone.
		{name: "the same value writes nothing",
			file: "{\n    \"a\": [1]\n}",
			args: `{"path": "f.json", "pointer": "/a", "value": [1]}`,
			want: wasm.Response{Output: `/a in f.json is already [1]; nothing written`}},
		{name: "a missing parent is named, not created",
			file: "{\n  \"a\": {}\n}\n",
			args: `{"path": "f.json", "pointer": "/a/b/c/d", "value": 1}`,
			want: wasm.Response{Error: `f.json: cannot set /a/b/c/d: its parent /a/b does not exist (/a has no key "b": it is an empty object); json_set creates no intermediate objects, so set /a/b first`}},
		{name: "a missing top-level parent",
			file: "{\n  \"name\": \"x\"\n}\n",
			args: `{"path": "f.json", "pointer": "/engines/node", "value": ">=20"}`,
			want: wasm.Response{Error: `f.json: cannot set /engines/node: its parent /engines does not exist (the top level has no key "engines"; its keys are "name"); json_set creates no intermediate objects, so set /engines first`}},
		{name: "a parent inside a scalar",
			file: "{\n  \"version\": \"1.0.0\"\n}\n",
			args: `{"path": "f.json", "pointer": "/version/major/x", "value": 2}`,
			want: wasm.Response{Error: `f.json: cannot set /version/major/x: its parent /version/major does not exist (/version is a string, not an object or array, so it has no "major")`}},
		{name: "a parent past the end of an array",
			file: "{\n  \"files\": []\n}\n",
			args: `{"path": "f.json", "pointer": "/files/0/name", "value": "a"}`,
			want: wasm.Response{Error: `f.json: cannot set /files/0/name: its parent /files/0 does not exist (/files has no index 0: it is an empty array)`}},
		{name: "an index past the end",
			file: "{\n  \"files\": [\"a\"]\n}\n",
			args: `{"path": "f.json", "pointer": "/files/1", "value": "b"}`,
			want: wasm.Response{Error: `f.json: cannot set /files/1: /files has no index 1: it has 1 element, index 0 (to append, use /files/-)`}},
		{name: "not an index",
			file: "[1]\n",
			args: `{"path": "f.json", "pointer": "/first", "value": 2}`,
			want: wasm.Response{Error: `f.json: cannot set /first: the top level is an array, and "first" is not an index: write digits without leading zeros (it has 1 element, index 0)`}},
		{name: "into a scalar",
			file: "{\n  \"version\": \"1.0.0\"\n}\n",
			args: `{"path": "f.json", "pointer": "/version/major", "value": 2}`,
			want: wasm.Response{Error: `f.json: cannot set /version/major: /version is a string, not an object or array, so it can hold no "major"`}},
		{name: "no value",
			file: "{}\n",
			args: `{"path": "f.json", "pointer": "/a"}`,
			want: wasm.Response{Error: `value is required: any JSON, such as "1.2.0", 3, true, null or {"key": "value"}`}},
		{name: "not JSON",
			file: "{\n  \"a\": 1,\n}\n",
			args: `{"path": "f.json", "pointer": "/a", "value": 2}`,
			want: wasm.Response{Error: `f.json: not JSON: line 3, column 1: invalid character '}' looking for beginning of object key string`}},
		{name: "a missing file is not created",
			args: `{"path": "new.json", "pointer": "", "value": {}}`,
			want: wasm.Response{Error: `new.json does not exist in the workspace`}},
		{name: "a path leaving the workspace",
			args: `{"path": "../f.json", "pointer": "/a", "value": 1}`,
			want: wasm.Response{Error: `path "../f.json" leaves the workspace; give a path inside it`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != "" {
				files["f.json"] = tc.file
			}
			ws := workspace(t, files)
			// An old modification time shows whether the file was rewritten.
			old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			if tc.file != "" {
				if err := os.Chtimes(filepath.Join(ws, "f.json"), old, old); err != nil {
					t.Fatal(err)
				}
			}
			if got := call(t, ws, "json_set", tc.args); got != tc.want {
				t.Errorf("json_set %s\n got %+v\nwant %+v", tc.args, got, tc.want)
			}
			if tc.file == "" {
				if entries, _ := os.ReadDir(ws); len(entries) != 0 {
					t.Errorf("workspace holds %d entries, want none", len(entries))
				}
				return
			}
			wantFile := tc.wantFile
			if wantFile == "" {
				wantFile = tc.file
			}
			if got := readFile(t, filepath.Join(ws, "f.json")); got != wantFile {
				t.Errorf("f.json afterwards:\n%s\nwant:\n%s", got, wantFile)
			}
			info, err := os.Stat(filepath.Join(ws, "f.json"))
			if err != nil {
				t.Fatal(err)
			}
			if rewritten := !info.ModTime().Equal(old); rewritten != (tc.wantFile != "") {
				t.Errorf("file rewritten = %v, want %v", rewritten, tc.wantFile != "")
			}
			// Nothing is left behind: no temporary files.
			if names := dirNames(t, ws); !slices.Equal(names, []string{"f.json"}) {
				t.Errorf("workspace holds %q, want only f.json", names)
			}
		})
	}
}

// The write replaces the file in place: its permissions stay, and a file
// in a subdirectory is written there.
func TestJSONSetKeepsPermissions(t *testing.T) {
	ws := workspace(t, map[string]string{"conf/app.json": "{\n  \"debug\": false\n}\n"})
	p := filepath.Join(ws, "conf", "app.json")
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	got := call(t, ws, "json_set", `{"path": "conf/app.json", "pointer": "/debug", "value": true}`)
	if want := "set /debug in conf/app.json: false → true"; got.Output != want {
		t.Fatalf("json_set = %+v, want output %q", got, want)
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o640 {
		t.Errorf("mode after json_set = %o, want 640", info.Mode().Perm())
	}
	if names := dirNames(t, filepath.Join(ws, "conf")); !slices.Equal(names, []string{"app.json"}) {
		t.Errorf("conf holds %q, want only app.json", names)
	}
}

// Through a symbolic link json_set edits the file it points to, and the
// link stays a link.
func TestJSONSetThroughSymlink(t *testing.T) {
	ws := workspace(t, map[string]string{"shared/base.json": "{\n  \"strict\": false\n}\n"})
	if err := os.Symlink(filepath.Join("shared", "base.json"), filepath.Join(ws, "tsconfig.json")); err != nil {
		t.Fatal(err)
	}
	got := call(t, ws, "json_set", `{"path": "tsconfig.json", "pointer": "/strict", "value": true}`)
	if want := "set /strict in tsconfig.json: false → true"; got.Output != want {
		t.Fatalf("json_set = %+v, want output %q", got, want)
	}
	if got, want := readFile(t, filepath.Join(ws, "shared", "base.json")), "{\n  \"strict\": true\n}\n"; got != want {
		t.Errorf("shared/base.json = %q, want %q", got, want)
	}
	if info, err := os.Lstat(filepath.Join(ws, "tsconfig.json")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("tsconfig.json is no longer a symbolic link (%v)", err)
	}
}

// What json_set writes, json_get reads back.
func TestJSONSetThenGet(t *testing.T) {
	ws := workspace(t, map[string]string{"package.json": packageJSON})
	if got := call(t, ws, "json_set", `{"path": "package.json", "pointer": "/scripts/lint", "value": {"cmd": "eslint", "args": ["."]}}`); got.Error != "" {
		t.Fatal(got.Error)
	}
	got := call(t, ws, "json_get", `{"path": "package.json", "pointer": "/scripts"}`)
	want := "{\n  \"build\": \"tsc\",\n  \"test\": \"vitest run\",\n  \"lint\": {\n    \"cmd\": \"eslint\",\n    \"args\": [\n      \".\"\n    ]\n  }\n}"
	if got.Output != want {
		t.Errorf("json_get after json_set = %+v, want output\n%s", got, want)
	}
}

// plugin.hcl declares exactly the tools this module serves: a tool missing
// from either side fails every call to it.
func TestManifestDeclaresEveryTool(t *testing.T) {
	manifest := readFile(t, "plugin.hcl")
	var blocks []string
	for _, m := range regexp.MustCompile(`(?m)^\s*tool "([^"]+)" \{`).FindAllStringSubmatch(manifest, -1) {
		blocks = append(blocks, m[1])
	}
	components := regexp.MustCompile(`components\s*=\s*\[([^\]]*)\]`).FindStringSubmatch(manifest)
	if components == nil {
		t.Fatal("plugin.hcl has no components")
	}
	var listed []string
	for _, m := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(components[1], -1) {
		listed = append(listed, m[1])
	}
	var served []string
	for name := range tools() {
		served = append(served, name)
	}
	slices.Sort(served)
	slices.Sort(blocks)
	slices.Sort(listed)
	if !slices.Equal(blocks, served) || !slices.Equal(listed, served) {
		t.Errorf("plugin.hcl components %q and tool blocks %q, want both %q", listed, blocks, served)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
