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
	vals := map[string]string{}
	for _, k := range baseEnv() {
		if len(allow) > 0 && !slices.Contains(allow, k) {
			continue
		}
		if v := l.getenv(k); v != "" {
			vals[k] = v
		}
	}
	return sandbox.MergeEnv(vals, extra)
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
