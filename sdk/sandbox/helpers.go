package sandbox

import (
	"fmt"
	"sort"
	"strings"
)

// ResourceLimit names the first resource limit l asks for beyond the
// timeout and the output cap ("memory", "process count", "disk", "CPU
// time"), or "". A backend that cannot enforce those refuses such calls.
func (l Limits) ResourceLimit() string {
	switch {
	case l.MemoryBytes > 0:
		return "memory"
	case l.MaxPids > 0:
		return "process count"
	case l.DiskBytes > 0:
		return "disk"
	case l.CPUTime > 0:
		return "CPU time"
	}
	return ""
}

// MergeEnv overlays a request's variables on base and returns them as
// sorted NAME=VALUE pairs. A name or value that cannot be put in an
// environment is an error.
func MergeEnv(base, extra map[string]string) ([]string, error) {
	vals := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		vals[k] = v
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
	sort.Strings(out)
	return out, nil
}
