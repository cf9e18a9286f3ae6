package local

import (
	"fmt"
	"slices"
	"strings"
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
	for k, v := range extra {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("environment variable %q: names must be non-empty without '=' or NUL, values without NUL", k)
		}
		vals[k] = v
	}
	out := make([]string, 0, len(vals))
	for k, v := range vals {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out, nil
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
