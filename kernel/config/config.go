package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// MaxTurnsCap is the hard upper bound on budget.max_turns. No layer may set
// a higher value; the gate stops every run at this many turns.
const MaxTurnsCap = 60

// Default values of the built-in layer.
const (
	DefaultSandbox        = "local-hardened"
	DefaultLogLevel       = "info"
	DefaultAutonomyLevel  = 0.3
	DefaultPermissionMode = ModeSupervised
	DefaultMaxTurns       = MaxTurnsCap
)

// Permission modes, from most to least restrictive.
const (
	ModeEmergencyStop = "emergency-stop"
	ModeReadOnly      = "read-only"
	ModePlan          = "plan"
	ModeSupervised    = "supervised"
	ModeTrusted       = "trusted"
	ModeAutonomous    = "autonomous"
)

// Autonomy level names and the numeric level each one stands for.
const (
	AutonomySupervised = "supervised"
	AutonomyTrusted    = "trusted"
	AutonomyAutonomous = "autonomous"
)

// Source names the configuration layer a value came from.
type Source string

// The five configuration layers, in precedence order (later wins).
const (
	SourceDefault Source = "default"
	SourceUser    Source = "user"
	SourceProject Source = "project"
	SourceEnv     Source = "env"
	SourceFlag    Source = "flag"
	// SourceSystem is the system-wide policy file, which binds.
	SourceSystem Source = "system"
)

// Origin records where one configuration value came from.
type Origin struct {
	// Source is the layer that set the value.
	Source Source
	// File is the configuration file, for the user and project layers.
	File string
	// Line is the 1-based line of the attribute in File.
	Line int
	// EnvVar names the environment variable, for the env layer.
	EnvVar string
	// Flag names the command-line option, for the flag layer.
	Flag string
}

// String renders the origin the way [Config.Show] prints it, for example
// "from /home/me/.config/sparrow/sparrow.hcl:3" or "from env SPARROW_MODEL".
func (o Origin) String() string {
	switch o.Source {
	case SourceUser, SourceProject, SourceSystem:
		return fmt.Sprintf("from %s:%d", o.File, o.Line)
	case SourceEnv:
		return "from env " + o.EnvVar
	case SourceFlag:
		return "from flag --" + o.Flag
	default:
		return string(SourceDefault)
	}
}

// Config is the merged, validated configuration of one Sparrow run.
type Config struct {
	// Model is the default model name (a model block label or a vendor id).
	Model string
	// Provider is the provider chosen on the command line, if any.
	Provider string
	// BaseURL is a base URL override for the chosen provider, from the
	// command line; the kernel applies it to that provider's base_url.
	BaseURL string
	// Sandbox is the default sandbox name.
	Sandbox string
	// LogLevel is one of trace, debug, info, warn, error.
	LogLevel string
	// Verbose is set by the --verbose flag.
	Verbose bool
	// VerifyCommand is the argv run after a mutating run finishes.
	VerifyCommand []string
	// TrustedProjects lists project directories whose project file may
	// widen trust. Entries are absolute paths.
	TrustedProjects []string
	// PluginMirrors are where `sparrow plugin install` looks, in order:
	// https:// URLs or directories.
	PluginMirrors []string

	// Plugins pins plugins by name.
	Plugins map[string]*Plugin
	// Providers, Sandboxes, Tools and Surfaces are the configured
	// components of each kind, by name.
	Providers map[string]*Component
	Sandboxes map[string]*Component
	Tools     map[string]*Component
	Surfaces  map[string]*Component
	// Models are named model definitions.
	Models map[string]*Model

	// Permissions are the permission mode and rules.
	Permissions Permissions
	// Autonomy is the autonomy dial.
	Autonomy Autonomy
	// Budget limits the cost and length of a run.
	Budget Budget
	// Routing chooses a model per task.
	Routing Routing
	// Policy locks plugin loading down.
	Policy Policy
	// Checkpoints tune workspace snapshots.
	Checkpoints Checkpoints

	// Paths are the files and directories this configuration was loaded
	// from and that Sparrow keeps its data in.
	Paths Paths
	// ProjectTrusted reports whether the project file was trusted, i.e.
	// its directory is listed in the user file's trusted_projects.
	ProjectTrusted bool

	// Origins records where each value came from, keyed by dotted path:
	// "model", "autonomy.level", "permissions.mode",
	// "plugin.modal.version", "provider.openai.plugin", ….
	Origins map[string]Origin
	// Sensitive lists dotted paths of plugin-specific attributes that
	// [Config.Show] must mask, in addition to attribute names containing
	// key, token, secret or password. See [Config.MarkSensitive].
	Sensitive map[string]bool

	getenv     func(string) string
	ruleRanges map[string]hcl.Range // first definition of each routing rule
}

// Plugin says how the plugin host finds and pins one plugin.
type Plugin struct {
	// Name is the block label.
	Name string
	// Source is a filesystem path or a registry name.
	Source string
	// Version is a semver constraint such as ">= 1.2, < 2".
	Version string
	// SHA256 is the expected hex SHA-256 of the plugin binary or module.
	SHA256 string
	// Env lists environment variables passed through to the plugin.
	Env []string
	// Enabled is false when the plugin must not be loaded.
	Enabled bool
}

// Component is one provider, sandbox, tool or surface block. Its
// plugin-specific attributes stay raw until [DecodeComponent] decodes them
// against the schema the plugin declares.
type Component struct {
	// Kind is "provider", "sandbox", "tool" or "surface".
	Kind string
	// Name is the block label.
	Name string
	// Plugin names the plugin that serves this component.
	Plugin string
	// Enabled is false when the component must not be used.
	Enabled bool
	// Bodies are the plugin-specific remainders of the block, one per
	// layer that defined it, earliest layer first; pass them to
	// [DecodeComponent].
	Bodies []hcl.Body
	// Sources names the layer of each body (user or project).
	Sources []Source
}

// Model is a named model definition.
type Model struct {
	// Name is the block label.
	Name string
	// Provider names the provider block that serves the model.
	Provider string
	// ID is the vendor's model id.
	ID string
	// ContextWindow is the context size in tokens; 0 means unknown.
	ContextWindow int
	// InputPricePerMTok is the USD price per million input tokens.
	InputPricePerMTok float64
	// OutputPricePerMTok is the USD price per million output tokens.
	OutputPricePerMTok float64
	// Fallback lists models to try, in order, when this one fails.
	Fallback []string
	// Seed asks the provider for reproducible sampling where it takes
	// one (OpenAI Chat Completions); nil sends none.
	Seed *int64
}

// Permissions are the permission mode, denied paths and rules.
type Permissions struct {
	// Mode is one of the Mode* constants.
	Mode string
	// DeniedPaths always include [DefaultDeniedPaths].
	DeniedPaths []string
	// Allow, Ask and Deny are the rules by decision, in definition order.
	Allow []Rule
	Ask   []Rule
	Deny  []Rule
}

// Rule is one allow, ask or deny block. A rule matches an action when
// every non-empty list matches it.
type Rule struct {
	// Tools are tool names.
	Tools []string
	// Paths are path globs.
	Paths []string
	// Commands are command prefixes.
	Commands []string
	// Providers are provider names.
	Providers []string
	// Surfaces are surface names.
	Surfaces []string
	// Reason is shown to the user when the rule decides.
	Reason string
	// Origin says where the rule was defined.
	Origin Origin
}

// Autonomy is the autonomy dial.
type Autonomy struct {
	// Level is in [0, 1].
	Level float64
}

// Name returns the named band the level falls in: supervised below 0.34,
// trusted below 0.67, autonomous above.
func (a Autonomy) Name() string { return AutonomyName(a.Level) }

// Budget limits the cost and length of a run. Zero means no limit, except
// for MaxTurns, which is always between 1 and [MaxTurnsCap].
type Budget struct {
	// MaxUSD is the spending limit in US dollars.
	MaxUSD float64
	// MaxTurns is the maximum number of model turns.
	MaxTurns int
	// MaxTokens is the maximum number of tokens.
	MaxTokens int
}

// Routing chooses a model per task.
type Routing struct {
	// Default is the model used when no rule matches.
	Default string
	// Rules are tried in definition order.
	Rules []RoutingRule
}

// RoutingRule sends tasks that match Match to Model.
type RoutingRule struct {
	// Name is the block label.
	Name string
	// Match is a regular expression (a plain keyword is one).
	Match string
	// Model is the model to route to.
	Model string
}

// Policy locks plugin loading down.
type Policy struct {
	// Locked allows only plugins that are in the lock file.
	Locked bool `json:"locked"`
	// TrustedKeys are "ed25519:<base64>" public keys.
	TrustedKeys []string `json:"trusted_keys"`
	// RequireSignatures allows only plugins signed by a trusted key;
	// unsigned development plugins are refused.
	RequireSignatures bool `json:"require_signatures"`
	// WASMOnlyFromDataDir refuses WASM modules outside the data
	// directory's installed plugins.
	WASMOnlyFromDataDir bool `json:"wasm_only_from_data_dir"`
	// MaxCapabilities, when set, is the most any plugin may declare.
	MaxCapabilities *MaxCapabilities `json:"max_capabilities,omitempty"`
	// System is the system-wide policy file that applied, "" when none.
	// Its settings bind: no user or project layer can loosen them.
	System string `json:"system,omitempty"`
}

// MaxCapabilities bounds what a plugin's manifest may declare.
type MaxCapabilities struct {
	// Network false refuses plugins that declare network access.
	Network bool `json:"network"`
	// Paths and Env list what may be declared; nil allows anything,
	// empty allows nothing.
	Paths []string `json:"paths"`
	Env   []string `json:"env"`
}

// DefaultDeniedPaths returns the paths that are always denied.
func DefaultDeniedPaths() []string {
	return []string{".git", ".env", ".env.local", ".ssh", "id_rsa", "id_ed25519"}
}

// AutonomyName returns the named band of an autonomy level.
func AutonomyName(level float64) string {
	switch {
	case level < 0.34:
		return AutonomySupervised
	case level < 0.67:
		return AutonomyTrusted
	default:
		return AutonomyAutonomous
	}
}

// ParseAutonomy parses an autonomy level given as a number in [0, 1] or as
// a name: supervised (0.2), trusted (0.5) or autonomous (0.8).
func ParseAutonomy(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if level, ok := autonomyLevels()[strings.ToLower(s)]; ok {
		return level, nil
	}
	level, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("autonomy %q: want a number between 0 and 1 or one of supervised, trusted, autonomous", s)
	}
	if level < 0 || level > 1 {
		return 0, fmt.Errorf("autonomy %v: must be between 0 and 1", level)
	}
	return level, nil
}

func autonomyLevels() map[string]float64 {
	return map[string]float64{
		AutonomySupervised: 0.2,
		AutonomyTrusted:    0.5,
		AutonomyAutonomous: 0.8,
	}
}

func permissionModes() []string {
	return []string{ModeReadOnly, ModePlan, ModeSupervised, ModeTrusted, ModeAutonomous, ModeEmergencyStop}
}

func logLevels() []string {
	return []string{"trace", "debug", "info", "warn", "error"}
}

// defaults returns the built-in layer.
func defaults(paths Paths, getenv func(string) string) *Config {
	c := &Config{
		Sandbox:   DefaultSandbox,
		LogLevel:  DefaultLogLevel,
		Plugins:   map[string]*Plugin{},
		Providers: map[string]*Component{},
		Sandboxes: map[string]*Component{},
		Tools:     map[string]*Component{},
		Surfaces:  map[string]*Component{},
		Models:    map[string]*Model{},
		Permissions: Permissions{
			Mode:        DefaultPermissionMode,
			DeniedPaths: DefaultDeniedPaths(),
		},
		Autonomy: Autonomy{Level: DefaultAutonomyLevel},
		Budget:   Budget{MaxTurns: DefaultMaxTurns},
		Checkpoints: Checkpoints{Retention: DefaultCheckpointRetention, MaxFileMB: DefaultMaxFileMB,
			RollbackFailed: true},
		Paths:     paths,
		Origins:   map[string]Origin{},
		Sensitive: map[string]bool{},
		getenv:    getenv,

		ruleRanges: map[string]hcl.Range{},
	}
	for _, key := range []string{
		"model", "sandbox", "log_level", "verify_command", "trusted_projects",
		"permissions.mode", "permissions.denied_paths", "autonomy.level",
		"budget.max_usd", "budget.max_turns", "budget.max_tokens",
		"routing.default", "checkpoints.retention", "checkpoints.max_file_mb", "checkpoints.rollback_failed",
		"policy.locked", "policy.trusted_keys", "policy.require_signatures",
	} {
		c.Origins[key] = Origin{Source: SourceDefault}
	}
	return c
}

// components returns the component map for a block type.
func (c *Config) components(kind string) map[string]*Component {
	switch kind {
	case "provider":
		return c.Providers
	case "sandbox":
		return c.Sandboxes
	case "tool":
		return c.Tools
	default:
		return c.Surfaces
	}
}

// MarkSensitive records which plugin-specific attributes of a component
// are sensitive according to the plugin's schema, so [Config.Show] masks
// them.
func (c *Config) MarkSensitive(kind, name string, schema []AttrSpec) {
	if c.Sensitive == nil {
		c.Sensitive = map[string]bool{}
	}
	for _, spec := range schema {
		if spec.Sensitive {
			c.Sensitive[kind+"."+name+"."+spec.Name] = true
		}
	}
}
