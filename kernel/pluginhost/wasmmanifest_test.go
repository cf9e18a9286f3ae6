package pluginhost_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

const wasmManifest = `plugin "json-tool" {
  kind        = "tool"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "wasm"
  entry       = "json-tool.wasm"
  components  = ["json_get", "json_set"]
  capabilities {
    clock = true
  }
  tool "json_get" {
    risk           = "read-only"
    path_arguments = ["path"]
    description    = <<-EOT
      Read a value from a JSON file.
      More text.
    EOT
    input_schema = {
      type = "object"
      properties = {
        path    = { type = "string", description = "file" }
        pointer = { type = "string" }
      }
      required             = ["path", "pointer"]
      additionalProperties = false
    }
  }
  tool "json_set" {
    risk           = "mutating"
    path_arguments = ["path"]
    description    = "Set a value in a JSON file."
    input_schema = {
      type       = "object"
      properties = { path = { type = "string" }, pointer = { type = "string" }, value = {} }
      required   = ["path", "pointer", "value"]
    }
    timeout    = "5s"
    memory     = "64MiB"
    max_output = "64KiB"
  }
}
`

func TestParseWASMManifest(t *testing.T) {
	m, diags := pluginhost.ParseManifest("/p/json-tool/plugin.hcl", []byte(wasmManifest))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if m.Runtime != pluginhost.RuntimeWASM || m.Entry != "/p/json-tool/json-tool.wasm" {
		t.Errorf("runtime %q entry %q", m.Runtime, m.Entry)
	}
	if !m.Capabilities.Clock || m.Capabilities.Random {
		t.Errorf("grants: %+v, want clock only", m.Capabilities)
	}
	if len(m.Tools) != 2 {
		t.Fatalf("tools: %+v", m.Tools)
	}
	get, set := m.Tools[0], m.Tools[1]
	if get.Spec.Name != "json_get" || get.Spec.Risk != tool.RiskReadOnly || get.Spec.Description != "Read a value from a JSON file.\nMore text.\n" {
		t.Errorf("json_get spec: %+v", get.Spec)
	}
	var schema map[string]any
	if err := json.Unmarshal(get.Spec.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":    map[string]any{"type": "string", "description": "file"},
			"pointer": map[string]any{"type": "string"},
		},
		"required":             []any{"path", "pointer"},
		"additionalProperties": false,
	}
	if d := cmp.Diff(want, schema); d != "" {
		t.Errorf("json_get schema (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"path"}, get.Spec.PathArguments); d != "" {
		t.Errorf("path arguments: %s", d)
	}
	if get.Timeout != 0 || get.MemoryBytes != 0 || get.MaxOutputBytes != 0 {
		t.Errorf("json_get limits %+v, want defaults", get)
	}
	if set.Spec.Risk != tool.RiskMutating || set.Timeout != 5*time.Second || set.MemoryBytes != 64<<20 || set.MaxOutputBytes != 64<<10 {
		t.Errorf("json_set: %+v", set)
	}
}

func TestParseWASMManifestErrors(t *testing.T) {
	base := func(edit func(string) string) string { return edit(wasmManifest) }
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"network", base(func(s string) string { return strings.Replace(s, "clock = true", "network = true", 1) }),
			[]string{"plugin.hcl:8,3-15", "a WASM tool has no sockets"}},
		{"environment and paths", base(func(s string) string {
			return strings.Replace(s, "clock = true", `env = ["HOME"]
    paths = ["/etc"]`, 1)
		}), []string{"gets the workspace and nothing else"}},
		{"a sandbox kind", base(func(s string) string { return strings.Replace(s, `kind        = "tool"`, `kind        = "sandbox"`, 1) }),
			[]string{"A WASM plugin serves tools; a sandbox plugin runs as a process"}},
		{"exec risk", base(func(s string) string {
			return strings.Replace(s, `risk           = "mutating"`, `risk           = "exec"`, 1)
		}),
			[]string{"plugin.hcl:29,22-28", `tool "json_set": a WASM tool cannot run commands`}},
		{"network risk", base(func(s string) string {
			return strings.Replace(s, `risk           = "read-only"`, `risk           = "network"`, 1)
		}),
			[]string{`tool "json_get": a WASM tool has no sockets`}},
		{"unknown risk", base(func(s string) string { return strings.Replace(s, `"read-only"`, `"harmless"`, 1) }),
			[]string{`unknown risk level "harmless"`}},
		{"a component without a block", base(func(s string) string {
			return strings.Replace(s, `["json_get", "json_set"]`, `["json_get", "json_set", "json_del"]`, 1)
		}), []string{`component "json_del" has no tool "json_del" block`}},
		{"a block without a component", base(func(s string) string { return strings.Replace(s, `["json_get", "json_set"]`, `["json_get"]`, 1) }),
			[]string{`tool "json_set" is not in components`}},
		{"schema not an object", base(func(s string) string { return strings.Replace(s, `type = "object"`, `type = "array"`, 1) }),
			[]string{`tool "json_get": input_schema: type must be "object"`}},
		{"schema a string", base(func(s string) string {
			return strings.Replace(s, `{
      type       = "object"
      properties = { path = { type = "string" }, pointer = { type = "string" }, value = {} }
      required   = ["path", "pointer", "value"]
    }`, `"{}"`, 1)
		}), []string{`input_schema must be an object`}},
		{"schema with a variable", base(func(s string) string { return strings.Replace(s, `type = "object"`, `type = var.x`, 1) }),
			[]string{`input_schema must be a constant object`}},
		{"required not a property", base(func(s string) string {
			return strings.Replace(s, `["path", "pointer", "value"]`, `["path", "pointer", "valeu"]`, 1)
		}),
			[]string{`required "valeu" is not among the properties`}},
		{"path argument not a property", base(func(s string) string {
			return strings.Replace(s, `path_arguments = ["path"]`, `path_arguments = ["file"]`, 1)
		}),
			[]string{`path argument "file" is not a property of input_schema`}},
		{"empty description", base(func(s string) string { return strings.Replace(s, `"Set a value in a JSON file."`, `""`, 1) }),
			[]string{`tool "json_set": description is empty`}},
		{"bad limits", base(func(s string) string {
			return strings.NewReplacer(`"5s"`, `"forever"`, `"64MiB"`, `"lots"`, `"64KiB"`, `"-1"`).Replace(s)
		}), []string{`timeout "forever"`, `memory "lots"`, `max_output "-1"`}},
		{"timeout too long", base(func(s string) string { return strings.Replace(s, `"5s"`, `"1h"`, 1) }),
			[]string{`timeout "1h": want a duration such as "30s", at most 10m0s`}},
		{"tool block in a gRPC plugin", base(func(s string) string {
			return strings.NewReplacer(`runtime     = "wasm"`, `runtime     = "grpc"`, "clock = true", "network = false").Replace(s)
		}), []string{`tool "json_get": tool blocks describe the tools of a WASM module`}},
		{"clock for a process", base(func(s string) string { return strings.Replace(s, `runtime     = "wasm"`, `runtime     = "grpc"`, 1) }),
			[]string{"capabilities.clock and capabilities.random are grants for WASM modules"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertRefused(t, tc.src, tc.want)
		})
	}
}
