package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Overrides are command-line flags, the last configuration layer. A nil
// field leaves the value to the earlier layers.
type Overrides struct {
	// Model is --model: the model name.
	Model *string
	// Provider is --provider: the provider to use.
	Provider *string
	// BaseURL is --base-url: the chosen provider's base URL.
	BaseURL *string
	// Sandbox is --sandbox: the sandbox name.
	Sandbox *string
	// Autonomy is --autonomy: a level in [0, 1] (see [ParseAutonomy]).
	Autonomy *float64
	// Mode is --mode: a permission mode.
	Mode *string
	// LogLevel is --log-level.
	LogLevel *string
	// MaxTurns is --max-turns: 1 to [MaxTurnsCap].
	MaxTurns *int
	// BudgetUSD is --budget-usd: the spending limit, greater than 0.
	BudgetUSD *float64
	// Verbose is --verbose; it turns on debug logging unless LogLevel is
	// also given or the level is already trace.
	Verbose *bool
}

// Environment variables of the env layer.
const (
	EnvModel     = "SPARROW_MODEL"
	EnvSandbox   = "SPARROW_SANDBOX"
	EnvAutonomy  = "SPARROW_AUTONOMY"
	EnvMode      = "SPARROW_MODE"
	EnvLogLevel  = "SPARROW_LOG_LEVEL"
	EnvMaxTurns  = "SPARROW_MAX_TURNS"
	EnvBudgetUSD = "SPARROW_BUDGET_USD"
)

// layer sets values from a non-file layer (env or flag), recording
// origins and collecting diagnostics that name the variable or flag.
type layer struct {
	cfg   *Config
	src   Source
	diags hcl.Diagnostics
}

func (l *layer) origin(name string) Origin {
	if l.src == SourceEnv {
		return Origin{Source: SourceEnv, EnvVar: name}
	}
	return Origin{Source: SourceFlag, Flag: name}
}

func (l *layer) errorf(name, format string, args ...any) {
	what := "environment variable " + name
	if l.src == SourceFlag {
		what = "flag --" + name
	}
	l.diags = append(l.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid " + what,
		Detail:   fmt.Sprintf(what+": "+format, args...),
	})
}

func (l *layer) str(name, key string, dst *string, v string) {
	*dst = v
	l.cfg.Origins[key] = l.origin(name)
}

func (l *layer) enum(name, key string, dst *string, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		l.errorf(name, "%q is not valid.%s Valid values: %s.", v, didYouMean(v, allowed), strings.Join(allowed, ", "))
		return
	}
	l.str(name, key, dst, v)
}

func (l *layer) autonomy(name string, level float64) {
	if level < 0 || level > 1 {
		l.errorf(name, "autonomy %v must be between 0 and 1.", level)
		return
	}
	l.cfg.Autonomy.Level = level
	l.cfg.Origins["autonomy.level"] = l.origin(name)
}

func (l *layer) maxTurns(name string, n int) {
	if n < 1 || n > MaxTurnsCap {
		l.errorf(name, "max turns %d must be between 1 and %d; Sparrow stops every run at %d turns.", n, MaxTurnsCap, MaxTurnsCap)
		return
	}
	l.cfg.Budget.MaxTurns = n
	l.cfg.Origins["budget.max_turns"] = l.origin(name)
}

func (l *layer) budgetUSD(name string, usd float64) {
	if usd <= 0 {
		l.errorf(name, "budget %v must be greater than 0.", usd)
		return
	}
	l.cfg.Budget.MaxUSD = usd
	l.cfg.Origins["budget.max_usd"] = l.origin(name)
}

// applyEnv applies the SPARROW_* layer. Empty variables are unset.
func applyEnv(cfg *Config, getenv func(string) string) hcl.Diagnostics {
	l := &layer{cfg: cfg, src: SourceEnv}
	if v := getenv(EnvModel); v != "" {
		l.str(EnvModel, "model", &cfg.Model, v)
	}
	if v := getenv(EnvSandbox); v != "" {
		l.str(EnvSandbox, "sandbox", &cfg.Sandbox, v)
	}
	if v := getenv(EnvMode); v != "" {
		l.enum(EnvMode, "permissions.mode", &cfg.Permissions.Mode, v, permissionModes())
	}
	if v := getenv(EnvLogLevel); v != "" {
		l.enum(EnvLogLevel, "log_level", &cfg.LogLevel, strings.ToLower(v), logLevels())
	}
	if v := getenv(EnvAutonomy); v != "" {
		if level, err := ParseAutonomy(v); err != nil {
			l.errorf(EnvAutonomy, "%v.", err)
		} else {
			l.autonomy(EnvAutonomy, level)
		}
	}
	if v := getenv(EnvMaxTurns); v != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil {
			l.errorf(EnvMaxTurns, "%q is not a whole number.", v)
		} else {
			l.maxTurns(EnvMaxTurns, n)
		}
	}
	if v := getenv(EnvBudgetUSD); v != "" {
		if usd, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(v, "$")), 64); err != nil {
			l.errorf(EnvBudgetUSD, "%q is not a number of US dollars.", v)
		} else {
			l.budgetUSD(EnvBudgetUSD, usd)
		}
	}
	return l.diags
}

// applyOverrides applies the flag layer.
func applyOverrides(cfg *Config, o Overrides) hcl.Diagnostics {
	l := &layer{cfg: cfg, src: SourceFlag}
	if o.Model != nil {
		l.str("model", "model", &cfg.Model, *o.Model)
	}
	if o.Provider != nil {
		l.str("provider", "provider", &cfg.Provider, *o.Provider)
	}
	if o.BaseURL != nil {
		l.str("base-url", "base_url", &cfg.BaseURL, *o.BaseURL)
	}
	if o.Sandbox != nil {
		if *o.Sandbox == "" {
			l.errorf("sandbox", "must name a sandbox, such as %q.", DefaultSandbox)
		} else {
			l.str("sandbox", "sandbox", &cfg.Sandbox, *o.Sandbox)
		}
	}
	if o.Mode != nil {
		l.enum("mode", "permissions.mode", &cfg.Permissions.Mode, *o.Mode, permissionModes())
	}
	if o.Verbose != nil {
		cfg.Verbose = *o.Verbose
		cfg.Origins["verbose"] = l.origin("verbose")
		if *o.Verbose && o.LogLevel == nil && cfg.LogLevel != "trace" {
			l.str("verbose", "log_level", &cfg.LogLevel, "debug")
		}
	}
	if o.LogLevel != nil {
		l.enum("log-level", "log_level", &cfg.LogLevel, *o.LogLevel, logLevels())
	}
	if o.Autonomy != nil {
		l.autonomy("autonomy", *o.Autonomy)
	}
	if o.MaxTurns != nil {
		l.maxTurns("max-turns", *o.MaxTurns)
	}
	if o.BudgetUSD != nil {
		l.budgetUSD("budget-usd", *o.BudgetUSD)
	}
	return l.diags
}
