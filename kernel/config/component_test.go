package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// bodies parses each source as the body of a component block in its own
// file, named layer0.hcl, layer1.hcl, ….
func bodies(t *testing.T, srcs ...string) []hcl.Body {
	t.Helper()
	var out []hcl.Body
	for i, src := range srcs {
		f, diags := hclsyntax.ParseConfig([]byte(src), "layer"+string(rune('0'+i))+".hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		out = append(out, f.Body)
	}
	return out
}

func testSchema() []AttrSpec {
	return []AttrSpec{
		{Name: "api_key", Type: TypeString, Required: true, Sensitive: true},
		{Name: "base_url", Type: TypeString, Default: "https://api.example.com"},
		{Name: "max_retries", Type: TypeNumber, Default: 3.0},
		{Name: "stream", Type: TypeBool},
		{Name: "models", Type: TypeListString},
		{Name: "headers", Type: TypeMapString},
		{Name: "timeout", Type: TypeDuration},
	}
}

func TestDecodeComponent(t *testing.T) {
	env := envOf(map[string]string{"KEY": "sk-live", "ORG": "acme"})
	tests := []struct {
		name   string
		layers []string
		want   map[string]any
		diags  []wantDiag
	}{
		{
			name: "every type, defaults and env()",
			layers: []string{`
api_key = env("KEY")
stream  = true
models  = ["a", "b"]
headers = { "X-Org" = env("ORG"), "X-Env" = env("UNSET", "dev") }
timeout = "1m30s"
`},
			want: map[string]any{
				"api_key": "sk-live", "base_url": "https://api.example.com", "max_retries": 3.0,
				"stream": true, "models": []string{"a", "b"}, "timeout": 90 * time.Second,
				"headers": map[string]string{"X-Org": "acme", "X-Env": "dev"},
			},
		},
		{
			name:   "later layers override earlier ones per attribute",
			layers: []string{"api_key = \"user\"\nmax_retries = 5\nstream = true\n", "api_key = \"project\"\nstream = false\n"},
			want: map[string]any{
				"api_key": "project", "base_url": "https://api.example.com", "max_retries": 5.0, "stream": false,
			},
		},
		{
			name:   "required attribute missing",
			layers: []string{"stream = true\n"},
			want:   map[string]any{"base_url": "https://api.example.com", "max_retries": 3.0, "stream": true},
			diags:  []wantDiag{{"error", "Missing required argument", "layer0.hcl:1:1", `"api_key" is required`}},
		},
		{
			name:   "required attribute set in an earlier layer only",
			layers: []string{"api_key = \"k\"\n", "stream = true\n"},
			want:   map[string]any{"api_key": "k", "base_url": "https://api.example.com", "max_retries": 3.0, "stream": true},
		},
		{
			name:   "unknown attribute with hint",
			layers: []string{"api_key = \"k\"\nbase_ulr = \"x\"\n"},
			want:   map[string]any{"api_key": "k", "base_url": "https://api.example.com", "max_retries": 3.0},
			diags:  []wantDiag{{"error", "Unsupported argument", "layer0.hcl:2:1", `Did you mean "base_url"?`}},
		},
		{
			name:   "type mismatches name the layer's file:line:col",
			layers: []string{"api_key = \"k\"\n", "stream = \"maybe\"\nmodels = \"a\"\ntimeout = \"soon\"\nmax_retries = [1]\n"},
			want:   map[string]any{"api_key": "k", "base_url": "https://api.example.com", "max_retries": 3.0},
			diags: []wantDiag{
				{"error", "Incorrect attribute value type", "layer1.hcl:1:10", "a bool is required"},
				{"error", "Incorrect attribute value type", "layer1.hcl:2:10", "list of string required"},
				{"error", "Invalid duration", "layer1.hcl:3:11", `"soon" is not a duration`},
				{"error", "Incorrect attribute value type", "layer1.hcl:4:15", "number required"},
			},
		},
		{
			name:   "blocks are not allowed",
			layers: []string{"api_key = \"k\"\nextra {\n}\n"},
			want:   map[string]any{"api_key": "k", "base_url": "https://api.example.com", "max_retries": 3.0},
			diags:  []wantDiag{{"error", `Unexpected "extra" block`, "layer0.hcl:2:1", "not allowed"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := DecodeComponent(bodies(t, tt.layers...), testSchema(), env)
			checkDiags(t, diags, tt.diags)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeComponent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeComponentBadSchema(t *testing.T) {
	_, diags := DecodeComponent(nil, []AttrSpec{{Name: "a", Type: "int"}, {Name: "b", Type: TypeString}, {Name: "b", Type: TypeBool}}, nil)
	checkDiags(t, diags, []wantDiag{
		{"error", "Invalid plugin schema", "", `"a" has unknown type "int"`},
		{"error", "Invalid plugin schema", "", `"b" is declared twice`},
	})
}

func TestDecodeComponentNoBodies(t *testing.T) {
	got, diags := DecodeComponent(nil, []AttrSpec{{Name: "token", Type: TypeString, Required: true}}, nil)
	checkDiags(t, diags, []wantDiag{{"error", "Missing required argument", "", `"token"`}})
	if len(got) != 0 {
		t.Errorf("got %v", got)
	}
}
