package local

import (
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// baseEnv names the variables commands inherit from the plugin's own
// environment (the ones its manifest declares); everything else comes from
// the request.
func baseEnv() []string { return []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER"} }

// env builds a command's environment, sorted: the base variables (only
// those in the policy's allowlist, when it has one) overlaid with the
// request's own. A name that cannot be put in an environment is an error.
func (l *Local) env(extra map[string]string, allow []string) ([]string, error) {
	return sandbox.MergeEnv(BaseEnv(l.getenv, allow), extra)
}

// BaseEnv reads the base variables a command inherits from the plugin's
// own environment through getenv, only those in allow when it is not
// empty; unset ones are left out. Backends built on this one overlay
// their own and the request's.
func BaseEnv(getenv func(string) string, allow []string) map[string]string {
	vals := map[string]string{}
	for _, k := range baseEnv() {
		if len(allow) > 0 && !slices.Contains(allow, k) {
			continue
		}
		if v := getenv(k); v != "" {
			vals[k] = v
		}
	}
	return vals
}

// envValue returns key's value in env, or "".
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}
