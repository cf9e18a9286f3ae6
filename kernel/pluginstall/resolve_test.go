package pluginstall

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolve(t *testing.T) {
	v := func(version, sdk string, protocol int, platforms ...string) IndexVersion {
		return IndexVersion{Version: version, Kind: "tool", Protocol: protocol, SDK: sdk, Platforms: platforms}
	}
	const any01 = ">= 0.1.0, < 0.2.0"
	for _, tc := range []struct {
		name       string
		versions   []IndexVersion
		constraint string
		platform   string // default testPlatform
		want       string // version
		wantPlat   string // default testPlatform
		wantErr    []string
	}{
		{name: "highest fitting", versions: []IndexVersion{v("0.1.0", any01, 1, testPlatform), v("0.10.0", any01, 1, testPlatform), v("0.2.0", any01, 1, testPlatform)},
			want: "0.10.0"},
		{name: "constraint", constraint: "~0.1", versions: []IndexVersion{v("0.1.0", any01, 1, testPlatform), v("0.1.5", any01, 1, testPlatform), v("0.2.0", any01, 1, testPlatform)},
			want: "0.1.5"},
		{name: "exact", constraint: "0.1.0", versions: []IndexVersion{v("0.1.0", any01, 1, testPlatform), v("0.2.0", any01, 1, testPlatform)},
			want: "0.1.0"},
		{name: "skips what does not fit", versions: []IndexVersion{v("0.1.0", any01, 1, testPlatform), v("0.3.0", ">= 0.2.0", 1, testPlatform), v("0.2.0", any01, 1, "darwin/arm64")},
			want: "0.1.0"},
		{name: "wasm fits any machine", platform: "plan9/mips", versions: []IndexVersion{v("1.0.0", any01, 1, "wasm")},
			want: "1.0.0", wantPlat: "wasm"},
		{name: "pre-release only when asked", versions: []IndexVersion{v("0.1.0", any01, 1, testPlatform), v("0.2.0-rc.1", any01, 1, testPlatform)},
			want: "0.1.0"},
		{name: "pre-release asked for", constraint: "0.2.0-rc.1", versions: []IndexVersion{v("0.1.0", any01, 1, testPlatform), v("0.2.0-rc.1", any01, 1, testPlatform)},
			want: "0.2.0-rc.1"},
		{name: "every reason listed", versions: []IndexVersion{
			v("0.4.0", any01, 2, testPlatform), v("0.3.0", ">= 0.2.0", 1, testPlatform), v("0.2.0", any01, 1, "darwin/arm64", "linux/arm64"),
			v("0.1.0", "not a range", 1, testPlatform), v("0.0.9", any01, 1), v("0.5.0-beta", any01, 1, testPlatform), v("latest", any01, 1, testPlatform)},
			wantErr: []string{"fits this Sparrow:",
				"\n  0.5.0-beta: a pre-release; name it in the constraint to install it",
				"\n  0.4.0: speaks plugin protocol 2, this Sparrow speaks 1",
				"\n  0.3.0: needs SDK >= 0.2.0, this Sparrow speaks 0.1.0",
				"\n  0.2.0: no build for linux/amd64 (has darwin/arm64, linux/arm64)",
				"\n  0.1.0: SDK range \"not a range\" is not a version range",
				"\n  0.0.9: no build for linux/amd64 (none listed)",
				"\n  latest: not a semantic version"}},
		{name: "version not found", constraint: "~> 2.0", versions: []IndexVersion{v("0.1.0", any01, 1, testPlatform), v("1.0.0", any01, 1, testPlatform)},
			wantErr: []string{`matches "~> 2.0" (it has 1.0.0, 0.1.0)`}},
		{name: "bad constraint", constraint: "one", versions: []IndexVersion{v("0.1.0", any01, 1, testPlatform)},
			wantErr: []string{`version constraint "one"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror(t)
			writeIndex(m, Index{Format: 1, Name: "hello-tool", Versions: tc.versions})
			e := newEnv(t, m.source())
			if tc.platform != "" {
				e.opts.Platform = tc.platform
			}
			got, err := Resolve(t.Context(), e.opts, "hello-tool", tc.constraint)
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantPlat := tc.wantPlat
			if wantPlat == "" {
				wantPlat = testPlatform
			}
			if got.Version.Version != tc.want || got.Platform != wantPlat {
				t.Errorf("resolved %s for %s, want %s for %s", got.Version.Version, got.Platform, tc.want, wantPlat)
			}
		})
	}
}

func TestResolveNoVersionErrorIsTyped(t *testing.T) {
	m := newMirror(t)
	writeIndex(m, Index{Format: 1, Name: "hello-tool", Versions: []IndexVersion{{Version: "0.1.0", Protocol: 1, SDK: ">= 9", Platforms: []string{testPlatform}}}})
	e := newEnv(t, m.source())
	_, err := Resolve(t.Context(), e.opts, "hello-tool", "")
	var nv *NoVersionError
	if !errors.As(err, &nv) {
		t.Fatalf("error %v, want a NoVersionError", err)
	}
	want := []Rejection{{Version: "0.1.0", Reason: "needs SDK >= 9, this Sparrow speaks 0.1.0"}}
	if diff := cmp.Diff(want, nv.Rejected); diff != "" {
		t.Errorf("rejections (-want +got):\n%s", diff)
	}
}

func writeIndex(m *mirror, ix Index) {
	data, _ := json.MarshalIndent(ix, "", "  ")
	m.write(ix.Name+"/"+IndexFile, data)
}

func TestParseIndex(t *testing.T) {
	const good = `{"format": 1, "name": "hello-tool", "versions": [{"version": "0.1.0", "kind": "tool", "protocol": 1, "sdk": ">= 0.1.0", "platforms": ["linux/amd64"]}]}`
	if _, err := ParseIndex("index.json", "hello-tool", []byte(good)); err != nil {
		t.Fatalf("good index: %v", err)
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", "index.json: empty or truncated JSON"},
		{"truncated", good[:50], "index.json: truncated JSON: it stops at byte 50"},
		{"syntax", "{\n\"format\": 1,,\n}", "index.json: line 2, column"},
		{"wrong type", `{"format": "1"}`, "index.json: line 1, column"},
		{"unknown field", `{"format": 1, "name": "hello-tool", "versions": [], "extra": true}`, `unknown field "extra"`},
		{"trailing data", good + "\n{}", "index.json: line 2, column 1: unexpected data after the JSON object"},
		{"format", `{"format": 2, "name": "hello-tool", "versions": []}`, "format: 2 is not an index format this Sparrow reads (want 1)"},
		{"name", `{"format": 1, "name": "other", "versions": []}`, `name: the index is for "other", not "hello-tool"`},
		{"no versions", `{"format": 1, "name": "hello-tool", "versions": []}`, "versions: none listed"},
		{"duplicate", `{"format": 1, "name": "hello-tool", "versions": [{"version": "1.0.0"}, {"version": "1.0.0"}]}`, `versions: "1.0.0" is listed twice`},
	} {
		_, err := ParseIndex("index.json", "hello-tool", []byte(tc.data))
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.name, tc.want)
			continue
		}
		wantErr(t, err, tc.want)
	}
}
