package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixture lays out a home directory with a user file and a workspace with
// a project file, and returns the environment that finds them.
type fixture struct {
	home, workspace, userFile, projectFile string
	env                                    map[string]string
}

func newFixture(t *testing.T, user, project string) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{home: filepath.Join(root, "home"), workspace: filepath.Join(root, "ws")}
	f.env = map[string]string{"HOME": f.home}
	if user != "" {
		f.userFile = writeFile(t, f.home, ".config/sparrow/sparrow.hcl", user)
	}
	writeFile(t, f.workspace, ".git/HEAD", "")
	if project != "" {
		f.projectFile = writeFile(t, f.workspace, ".sparrow/sparrow.hcl", project)
	}
	return f
}

func (f fixture) load(t *testing.T, o Overrides) *Config {
	t.Helper()
	cfg, diags := Load(LoadOptions{Workspace: f.workspace, Getenv: envOf(f.env), Overrides: o})
	if len(diags) > 0 {
		t.Fatalf("Load: unexpected diagnostics:\n%s", formatViews(viewDiags(diags)))
	}
	return cfg
}

func TestLoadDefaults(t *testing.T) {
	cfg, diags := Load(LoadOptions{Workspace: t.TempDir(), Getenv: envOf(map[string]string{"HOME": t.TempDir()})})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	type summary struct {
		Model, Sandbox, LogLevel, Mode string
		Level                          float64
		MaxTurns                       int
		Denied                         []string
	}
	got := summary{cfg.Model, cfg.Sandbox, cfg.LogLevel, cfg.Permissions.Mode, cfg.Autonomy.Level, cfg.Budget.MaxTurns, cfg.Permissions.DeniedPaths}
	want := summary{"", "local-hardened", "info", "supervised", 0.3, 60, DefaultDeniedPaths()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if o := cfg.Origins["model"]; o.Source != SourceDefault {
		t.Errorf("model origin = %+v, want default", o)
	}
}

func TestLoadPrecedence(t *testing.T) {
	user := `model     = "user-model"
sandbox   = "docker"
log_level = "warn"
autonomy {
  level = 0.6
}
budget {
  max_turns = 50
  max_usd   = 10
}
`
	project := `model = "project-model"
log_level = "error"
routing {
  default = "project-model"
}
budget {
  max_turns = 40
}
`
	f := newFixture(t, user, project)
	f.env["SPARROW_LOG_LEVEL"] = "debug"
	f.env["SPARROW_BUDGET_USD"] = "2.5"
	f.env["SPARROW_MODEL"] = "env-model"
	cfg := f.load(t, Overrides{Model: ptr("flag-model"), Autonomy: ptr(0.1)})

	type setting struct {
		Value  any
		Origin Origin
	}
	got := map[string]setting{
		"model":            {cfg.Model, cfg.Origins["model"]},
		"sandbox":          {cfg.Sandbox, cfg.Origins["sandbox"]},
		"log_level":        {cfg.LogLevel, cfg.Origins["log_level"]},
		"autonomy.level":   {cfg.Autonomy.Level, cfg.Origins["autonomy.level"]},
		"budget.max_turns": {cfg.Budget.MaxTurns, cfg.Origins["budget.max_turns"]},
		"budget.max_usd":   {cfg.Budget.MaxUSD, cfg.Origins["budget.max_usd"]},
		"routing.default":  {cfg.Routing.Default, cfg.Origins["routing.default"]},
		"permissions.mode": {cfg.Permissions.Mode, cfg.Origins["permissions.mode"]},
	}
	want := map[string]setting{
		"model":            {"flag-model", Origin{Source: SourceFlag, Flag: "model"}},
		"sandbox":          {"docker", Origin{Source: SourceUser, File: f.userFile, Line: 2}},
		"log_level":        {"debug", Origin{Source: SourceEnv, EnvVar: "SPARROW_LOG_LEVEL"}},
		"autonomy.level":   {0.1, Origin{Source: SourceFlag, Flag: "autonomy"}},
		"budget.max_turns": {40, Origin{Source: SourceProject, File: f.projectFile, Line: 7}},
		"budget.max_usd":   {2.5, Origin{Source: SourceEnv, EnvVar: "SPARROW_BUDGET_USD"}},
		"routing.default":  {"project-model", Origin{Source: SourceProject, File: f.projectFile, Line: 4}},
		"permissions.mode": {"supervised", Origin{Source: SourceDefault}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("precedence (-want +got):\n%s", diff)
	}
	if cfg.ProjectTrusted {
		t.Error("project trusted without being listed")
	}
}

func TestLoadEnvAndFlagLayers(t *testing.T) {
	f := newFixture(t, `log_level = "trace"`, "")
	f.env["SPARROW_AUTONOMY"] = "autonomous"
	f.env["SPARROW_MODE"] = "trusted"
	f.env["SPARROW_MAX_TURNS"] = "12"
	f.env["SPARROW_SANDBOX"] = "docker"
	cfg := f.load(t, Overrides{
		Provider: ptr("openai"), BaseURL: ptr("http://127.0.0.1:8080/v1"), Sandbox: ptr("local-hardened"),
		Mode: ptr("plan"), MaxTurns: ptr(5), BudgetUSD: ptr(1.0), Verbose: ptr(true),
	})
	type summary struct {
		Provider, BaseURL, Sandbox, Mode, LogLevel string
		Level, USD                                 float64
		MaxTurns                                   int
		Verbose                                    bool
	}
	got := summary{cfg.Provider, cfg.BaseURL, cfg.Sandbox, cfg.Permissions.Mode, cfg.LogLevel,
		cfg.Autonomy.Level, cfg.Budget.MaxUSD, cfg.Budget.MaxTurns, cfg.Verbose}
	want := summary{"openai", "http://127.0.0.1:8080/v1", "local-hardened", "plan", "trace", 0.8, 1, 5, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	wantOrigins := map[string]Origin{
		"autonomy.level":   {Source: SourceEnv, EnvVar: "SPARROW_AUTONOMY"},
		"budget.max_turns": {Source: SourceFlag, Flag: "max-turns"},
		"permissions.mode": {Source: SourceFlag, Flag: "mode"},
		"base_url":         {Source: SourceFlag, Flag: "base-url"},
		"log_level":        {Source: SourceUser, File: f.userFile, Line: 1},
	}
	gotOrigins := map[string]Origin{}
	for k := range wantOrigins {
		gotOrigins[k] = cfg.Origins[k]
	}
	if diff := cmp.Diff(wantOrigins, gotOrigins); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
}

func TestLoadVerboseRaisesLogLevel(t *testing.T) {
	f := newFixture(t, "", "")
	cfg := f.load(t, Overrides{Verbose: ptr(true)})
	if cfg.LogLevel != "debug" || cfg.Origins["log_level"].Flag != "verbose" {
		t.Errorf("log level = %q from %+v, want debug from --verbose", cfg.LogLevel, cfg.Origins["log_level"])
	}
}

func TestLoadMergesBlocksPerAttribute(t *testing.T) {
	user := `plugin "modal" {
  source  = "modal-sandbox"
  version = "~> 0.3"
}
model "fast" {
  provider = "openai"
  id       = "gpt-5-mini"
}
provider "openai" {
  plugin  = "openai"
  api_key = env("OPENAI_API_KEY")
}
routing {
  rule "docs" {
    match = "docs?"
    model = "fast"
  }
}
permissions {
  denied_paths = ["secrets/**"]
}
trusted_projects = ["~/ws"]
`
	project := `model "fast" {
  context_window = 128000
}
provider "openai" {
  timeout = "30s"
}
routing {
  rule "docs" {
    model = "slow"
  }
}
permissions {
  denied_paths = ["*.pem"]
}
plugin "modal" {
  version = "~> 0.4"
}
`
	f := newFixture(t, user, project)
	// Trust the project so every block applies; TestUntrusted* covers the rest.
	f.env["HOME"] = filepath.Dir(f.workspace)
	f.userFile = writeFile(t, f.env["HOME"], ".config/sparrow/sparrow.hcl", user)
	cfg := f.load(t, Overrides{})

	if !cfg.ProjectTrusted {
		t.Fatal("project listed as ~/ws is not trusted")
	}
	wantModel := &Model{Name: "fast", Provider: "openai", ID: "gpt-5-mini", ContextWindow: 128000}
	if diff := cmp.Diff(wantModel, cfg.Models["fast"]); diff != "" {
		t.Errorf("model (-want +got):\n%s", diff)
	}
	if got := cfg.Plugins["modal"]; got.Source != "modal-sandbox" || got.Version != "~> 0.4" || !got.Enabled {
		t.Errorf("plugin = %+v", got)
	}
	if diff := cmp.Diff([]RoutingRule{{Name: "docs", Match: "docs?", Model: "slow"}}, cfg.Routing.Rules); diff != "" {
		t.Errorf("routing (-want +got):\n%s", diff)
	}
	wantDenied := append(DefaultDeniedPaths(), "secrets/**", "*.pem")
	if diff := cmp.Diff(wantDenied, cfg.Permissions.DeniedPaths); diff != "" {
		t.Errorf("denied paths (-want +got):\n%s", diff)
	}
	p := cfg.Providers["openai"]
	if p.Plugin != "openai" || len(p.Bodies) != 2 {
		t.Fatalf("provider = %+v", p)
	}
	got, diags := DecodeComponent(p.Bodies, []AttrSpec{
		{Name: "api_key", Type: TypeString, Sensitive: true},
		{Name: "timeout", Type: TypeDuration},
	}, envOf(map[string]string{"OPENAI_API_KEY": "sk-test"}))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if diff := cmp.Diff(map[string]any{"api_key": "sk-test", "timeout": 30 * time.Second}, got); diff != "" {
		t.Errorf("decoded provider (-want +got):\n%s", diff)
	}
}

func TestLoadExplicitFiles(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "u.hcl", `model = "u"`)
	project := writeFile(t, dir, "p.hcl", `model = "p"`)
	cfg, diags := Load(LoadOptions{UserFile: user, ProjectFile: project, Getenv: envOf(nil)})
	if len(diags) > 0 || cfg.Model != "p" || cfg.Paths.ProjectDir != dir {
		t.Fatalf("model %q dir %q diags %v", cfg.Model, cfg.Paths.ProjectDir, diags)
	}

	_, diags = Load(LoadOptions{UserFile: filepath.Join(dir, "missing.hcl"), Getenv: envOf(nil)})
	checkDiags(t, diags, []wantDiag{{"error", "Cannot read configuration file", "", "missing.hcl"}})

	_, diags = Load(LoadOptions{Getenv: envOf(map[string]string{"SPARROW_CONFIG": filepath.Join(dir, "nope.hcl")})})
	checkDiags(t, diags, []wantDiag{{"error", "Cannot read configuration file", "", "nope.hcl"}})
}

func TestCheckpointsBlock(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "user.hcl", "checkpoints {\n  retention = \"7d\"\n  max_file_mb = 0\n}\n")
	cfg, diags := Load(LoadOptions{UserFile: user, Workspace: dir, Getenv: envOf(nil)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := Checkpoints{Retention: 7 * 24 * time.Hour, MaxFileMB: 0, RollbackFailed: true}
	if cfg.Checkpoints != want {
		t.Fatalf("checkpoints = %+v, want %+v", cfg.Checkpoints, want)
	}
	if o := cfg.Origins["checkpoints.retention"]; !strings.Contains(o.String(), "user.hcl:2") {
		t.Errorf("retention origin = %s", o)
	}
	def, _ := Load(LoadOptions{Workspace: dir, Getenv: envOf(nil)})
	if def.Checkpoints.Retention != DefaultCheckpointRetention || def.Checkpoints.MaxFileMB != DefaultMaxFileMB || !def.Checkpoints.RollbackFailed {
		t.Errorf("defaults = %+v", def.Checkpoints)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 720 * time.Hour, "0": 0, "90m": 90 * time.Minute, "1h30m": 90 * time.Minute} {
		got, err := ParseAge(in)
		if err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := ParseAge(FormatAge(got)); back != got {
			t.Errorf("FormatAge(%v) = %q does not read back", got, FormatAge(got))
		}
	}
	for _, bad := range []string{"", "d", "-1d", "-5m", "month", "1.5d"} {
		if _, err := ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) accepted", bad)
		}
	}
}
