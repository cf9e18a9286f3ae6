package config

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseFileDiagnostics(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []wantDiag
	}{
		{
			name: "syntax error",
			src:  "model = \"x\"\nbudget {\n  max_turns = \n}\n",
			want: []wantDiag{{"error", "Invalid expression", "sparrow.hcl:3:15", "Expected the start of an expression"}},
		},
		{
			name: "unknown attribute with hint",
			src:  "modle = \"gpt-5\"\n",
			want: []wantDiag{{"error", "Unsupported argument", "sparrow.hcl:1:1", `Did you mean "model"?`}},
		},
		{
			name: "unknown block with hint",
			src:  "permisions {\n}\n",
			want: []wantDiag{{"error", "Unsupported block type", "sparrow.hcl:1:1", `Did you mean "permissions"?`}},
		},
		{
			name: "unknown nested attribute with hint",
			src:  "budget {\n  max_turn = 3\n}\n",
			want: []wantDiag{{"error", "Unsupported argument", "sparrow.hcl:2:3", `Did you mean "max_turns"?`}},
		},
		{
			name: "bad checkpoint retention",
			src:  "checkpoints {\n  retention = \"a month\"\n}\n",
			want: []wantDiag{{"error", "Invalid duration", "sparrow.hcl:2:15", `write something like "30d"`}},
		},
		{
			name: "negative file cap",
			src:  "checkpoints {\n  max_file_mb = -1\n}\n",
			want: []wantDiag{{"error", "Value out of range", "sparrow.hcl:2:17", "Use 0 for no cap."}},
		},
		{
			name: "bad enum with hint",
			src:  "permissions {\n  mode = \"supervise\"\n}\n",
			want: []wantDiag{{"error", "Invalid value for mode", "sparrow.hcl:2:10", `Did you mean "supervised"?`}},
		},
		{
			name: "bad log level",
			src:  "log_level = \"verbose\"\n",
			want: []wantDiag{{"error", "Invalid value for log_level", "sparrow.hcl:1:13", "trace, debug, info, warn, error"}},
		},
		{
			name: "max_turns above the hard cap",
			src:  "budget {\n  max_turns = 61\n}\n",
			want: []wantDiag{{"error", "Value out of range", "sparrow.hcl:2:15", "must be between 1 and 60, got 61. Sparrow stops every run at 60 turns"}},
		},
		{
			name: "max_turns not whole",
			src:  "budget {\n  max_turns = 2.5\n}\n",
			want: []wantDiag{{"error", "Invalid value", "sparrow.hcl:2:15", "whole number"}},
		},
		{
			name: "wrong type",
			src:  "budget {\n  max_usd = \"lots\"\n}\n",
			want: []wantDiag{{"error", "Incorrect attribute value type", "sparrow.hcl:2:13", "a number is required"}},
		},
		{
			name: "autonomy name with hint",
			src:  "autonomy {\n  level = \"autonomus\"\n}\n",
			want: []wantDiag{{"error", "Invalid autonomy level", "sparrow.hcl:2:11", `Did you mean "autonomous"?`}},
		},
		{
			name: "autonomy out of range",
			src:  "autonomy {\n  level = 1.5\n}\n",
			want: []wantDiag{{"error", "Invalid autonomy level", "sparrow.hcl:2:11", "between 0 and 1"}},
		},
		{
			name: "duplicate block",
			src:  "budget {\n}\nbudget {\n}\n",
			want: []wantDiag{{"error", "Duplicate budget block", "sparrow.hcl:3:1", "already defined on line 1"}},
		},
		{
			name: "missing label",
			src:  "plugin {\n}\n",
			want: []wantDiag{{"error", "Missing name for plugin", "sparrow.hcl:1:8", "All plugin blocks must have 1 labels"}},
		},
		{
			name: "plugin pins",
			src: `plugin "x" {
  version = "latest"
  sha256  = "abc"
  env     = ["OK", "NOT-OK"]
}
`,
			want: []wantDiag{
				{"error", "Invalid version constraint", "sparrow.hcl:2:13", "not a semver constraint"},
				{"error", "Invalid sha256", "sparrow.hcl:3:13", "64 hexadecimal"},
				{"error", "Invalid environment variable name", "sparrow.hcl:4:13", `"NOT-OK"`},
			},
		},
		{
			name: "policy key, relative trusted project, bad regex, empty rule, self fallback",
			src: `trusted_projects = ["src/mine"]
policy {
  trusted_keys = ["rsa:AAAA"]
}
routing {
  rule "r" {
    match = "("
    model = "m"
  }
}
permissions {
  deny {
    reason = "nothing"
  }
}
model "m" {
  fallback = ["m"]
}
`,
			want: []wantDiag{
				{"error", "Invalid value for trusted_projects", "sparrow.hcl:1:20", "not an absolute path"},
				{"error", "Invalid trusted key", "sparrow.hcl:3:18", "ed25519"},
				{"error", "Invalid match pattern", "sparrow.hcl:7:13", "not a valid regular expression"},
				{"error", "Empty deny rule", "sparrow.hcl:12:3", "at least one of"},
				{"error", "Invalid fallback", "sparrow.hcl:17:14", "cannot fall back to itself"},
			},
		},
		{
			name: "bad glob and max_usd zero",
			src:  "permissions {\n  denied_paths = [\"[\"]\n}\nbudget {\n  max_usd = 0\n}\n",
			want: []wantDiag{
				{"error", "Invalid path pattern", "sparrow.hcl:2:18", "not a valid glob"},
				{"error", "Value out of range", "sparrow.hcl:5:13", "greater than 0"},
			},
		},
		{
			name: "env() is not evaluated when validating",
			src:  "log_level = env(\"LEVEL\")\nprovider \"p\" {\n  api_key = env(\"KEY\")\n}\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "sparrow.hcl", tt.src)
			file, diags := ParseFile(path)
			if file == nil {
				t.Fatal("ParseFile returned no file")
			}
			checkDiags(t, diags, tt.want)
		})
	}
}

func TestMultipleErrorsInOnePass(t *testing.T) {
	user := `modle = "x"
log_level = "loud"
budget {
  max_turns = 100
}
autonomy {
  level = "yolo"
}
`
	project := `sandbox = 
permissions {
  mode = "anything"
}
`
	f := newFixture(t, user, project)
	f.env["SPARROW_MAX_TURNS"] = "lots"
	_, diags := Load(LoadOptions{Workspace: f.workspace, Getenv: envOf(f.env)})
	checkDiags(t, diags, []wantDiag{
		{"error", "Unsupported argument", "sparrow.hcl:1:1", `Did you mean "model"?`},
		{"error", "Invalid value for log_level", "sparrow.hcl:2:13", `"loud"`},
		{"error", "Value out of range", "sparrow.hcl:4:15", "got 100"},
		{"error", "Invalid autonomy level", "sparrow.hcl:7:11", "yolo"},
		{"error", "Invalid expression", "sparrow.hcl:1:11", ""},
		{"error", "Invalid value for mode", "sparrow.hcl:3:10", `"anything"`},
		{"error", "Invalid environment variable SPARROW_MAX_TURNS", "", `"lots" is not a whole number`},
	})
	// The first four come from the user file, the next two from the project.
	if got := diags[0].Subject.Filename; got != f.userFile {
		t.Errorf("first diagnostic in %s, want the user file", got)
	}
	if got := diags[4].Subject.Filename; got != f.projectFile {
		t.Errorf("fifth diagnostic in %s, want the project file", got)
	}
}

func TestEnvironmentDiagnostics(t *testing.T) {
	tests := []struct {
		name, value, detail string
	}{
		{"SPARROW_MAX_TURNS", "61", "between 1 and 60"},
		{"SPARROW_MAX_TURNS", "ten", "not a whole number"},
		{"SPARROW_AUTONOMY", "high", "want a number between 0 and 1"},
		{"SPARROW_AUTONOMY", "2", "between 0 and 1"},
		{"SPARROW_MODE", "yolo", "read-only, plan, supervised"},
		{"SPARROW_MODE", "trustd", `Did you mean "trusted"?`},
		{"SPARROW_LOG_LEVEL", "loud", "trace, debug"},
		{"SPARROW_BUDGET_USD", "cheap", "not a number of US dollars"},
		{"SPARROW_BUDGET_USD", "-1", "greater than 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			_, diags := Load(LoadOptions{Getenv: envOf(map[string]string{tt.name: tt.value})})
			checkDiags(t, diags, []wantDiag{{"error", "Invalid environment variable " + tt.name, "", tt.detail}})
			if !strings.Contains(diags[0].Detail, tt.name) {
				t.Errorf("detail %q does not name %s", diags[0].Detail, tt.name)
			}
		})
	}
}

func TestOverrideDiagnostics(t *testing.T) {
	_, diags := Load(LoadOptions{Getenv: envOf(nil), Overrides: Overrides{
		MaxTurns: ptr(90), Autonomy: ptr(-0.5), Mode: ptr("yolo"), LogLevel: ptr("x"), BudgetUSD: ptr(0.0), Sandbox: ptr(""),
	}})
	checkDiags(t, diags, []wantDiag{
		{"error", "Invalid flag --sandbox", "", "must name a sandbox"},
		{"error", "Invalid flag --mode", "", `"yolo"`},
		{"error", "Invalid flag --log-level", "", `"x"`},
		{"error", "Invalid flag --autonomy", "", "between 0 and 1"},
		{"error", "Invalid flag --max-turns", "", "between 1 and 60"},
		{"error", "Invalid flag --budget-usd", "", "greater than 0"},
	})
}

func TestWriteDiagnostics(t *testing.T) {
	path := writeFile(t, t.TempDir(), "sparrow.hcl", "budget {\n  max_turns = 99\n}\n")
	var b bytes.Buffer
	if err := WriteDiagnostics(&b, ValidateFile(path), 0, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Error: Value out of range", "sparrow.hcl line 2", "max_turns = 99"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}
