package config

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

const examplePath = "../../sparrow.hcl.example"

// TestExampleFile keeps sparrow.hcl.example from rotting: it must parse
// without a single diagnostic, stay hclwrite-formatted, and use every
// block type and every attribute the parser knows.
func TestExampleFile(t *testing.T) {
	if diags := ValidateFile(examplePath); len(diags) > 0 {
		t.Fatalf("ValidateFile(%s):\n%s", examplePath, formatViews(viewDiags(diags)))
	}
	src, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(hclwrite.Format(src), src) {
		t.Error("sparrow.hcl.example is not hclwrite-formatted")
	}
	f, diags := hclsyntax.ParseConfig(src, examplePath, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	seen := map[string]bool{}
	collect(f.Body.(*hclsyntax.Body), "", seen)

	for path, schema := range schemas() {
		if path != "" && !seen[path] {
			t.Errorf("sparrow.hcl.example has no %q block", path)
		}
		for _, a := range schema.Attributes {
			if !seen[path+"#"+a.Name] {
				t.Errorf("sparrow.hcl.example does not show attribute %q of block %q", a.Name, path)
			}
		}
	}
	for _, b := range schemaFor("").Blocks {
		if !seen[b.Type] {
			t.Errorf("sparrow.hcl.example does not mention top-level block %q", b.Type)
		}
	}
}

// collect records every block path ("permissions.allow") and attribute
// ("permissions.allow#tools") in body.
func collect(body *hclsyntax.Body, prefix string, seen map[string]bool) {
	for name := range body.Attributes {
		seen[prefix+"#"+name] = true
	}
	for _, b := range body.Blocks {
		path := b.Type
		if prefix != "" {
			path = prefix + "." + b.Type
		}
		seen[path] = true
		collect(b.Body, path, seen)
	}
}

// TestExampleLoads loads the example as a user file with its environment
// variables set, and decodes a provider the way the kernel will.
func TestExampleLoads(t *testing.T) {
	env := map[string]string{
		"HOME": t.TempDir(), "OPENAI_API_KEY": "sk-example", "ANTHROPIC_API_KEY": "sk-ant-example",
		"SPARROW_CONSOLE_TOKEN": "console-example",
	}
	cfg, diags := Load(LoadOptions{UserFile: examplePath, Getenv: envOf(env)})
	if len(diags) > 0 {
		t.Fatalf("Load:\n%s", formatViews(viewDiags(diags)))
	}
	for kind, names := range map[string][]string{
		"provider": {"anthropic", "ollama", "openai"},
		"sandbox":  {"docker", "local", "local-hardened", "modal", "singularity", "ssh", "worktree"},
		"tool":     {"grep", "shell", "web_fetch"},
		"surface":  {"console"},
	} {
		var got []string
		for name := range cfg.components(kind) {
			got = append(got, name)
		}
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Errorf("%s blocks = %v, want %v", kind, got, names)
		}
	}
	openai, diags := DecodeComponent(cfg.Providers["openai"].Bodies, []AttrSpec{
		{Name: "api_key", Type: TypeString, Required: true, Sensitive: true},
		{Name: "base_url", Type: TypeString},
	}, envOf(env))
	if len(diags) > 0 || openai["api_key"] != "sk-example" || openai["base_url"] != "https://api.openai.com/v1" {
		t.Errorf("openai = %v, diags %v", openai, diags)
	}
	if cfg.Autonomy.Level != 0.5 || cfg.Budget.MaxTurns != 40 || len(cfg.Permissions.Allow) != 3 {
		t.Errorf("autonomy %v, max_turns %d, allow rules %d", cfg.Autonomy.Level, cfg.Budget.MaxTurns, len(cfg.Permissions.Allow))
	}
}
