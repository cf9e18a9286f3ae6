package kernel

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// SandboxPolicyError is SandboxOptions that do not make a policy: an
// empty path, or an extra path inside a denied one. The caller's input is
// wrong; `sandbox exec` exits 2.
type SandboxPolicyError struct {
	Backend string
	Err     error
}

func (e *SandboxPolicyError) Error() string {
	return "sandbox " + e.Backend + ": policy: " + e.Err.Error()
}

func (e *SandboxPolicyError) Unwrap() error { return e.Err }

// policyInput is what a session's policy is compiled from.
type policyInput struct {
	// workspace is the host directory commands work in.
	workspace string
	// home is $HOME as the kernel's environment has it; "" or a relative
	// path adds no home denials.
	home string
	// denied are the permission's denied names and globs.
	denied []string
	// envAllow are the variable names commands may see.
	envAllow []string
	options  SandboxOptions
	caps     sandbox.Capabilities
}

// compilePolicy builds a session's policy: the workspace read-write and
// first, then the extra paths; the default home denials and the caller's
// denied paths; network for backends that cannot deny it, or when asked.
// Paths are made absolute against the workspace and cleaned. An extra
// path inside a denied one is a conflict the caller must resolve, not a
// choice the kernel makes.
func compilePolicy(in policyInput) (sandbox.Policy, error) {
	o := in.options
	ws := filepath.Clean(in.workspace)
	extraRead, err := resolvePaths(ws, "extra read", o.ExtraRead)
	if err != nil {
		return sandbox.Policy{}, err
	}
	extraWrite, err := resolvePaths(ws, "extra write", o.ExtraWrite)
	if err != nil {
		return sandbox.Policy{}, err
	}
	denyRead, err := resolvePaths(ws, "deny read", o.DenyRead)
	if err != nil {
		return sandbox.Policy{}, err
	}
	denyWrite, err := resolvePaths(ws, "deny write", o.DenyWrite)
	if err != nil {
		return sandbox.Policy{}, err
	}
	denyRead = union(homeDenied(in.home), denyRead)
	for _, c := range []struct {
		what   string
		paths  []string
		denied []string
	}{
		{"extra read", extraRead, denyRead},
		{"extra write", extraWrite, denyRead},
		{"extra write", extraWrite, denyWrite},
	} {
		for _, p := range c.paths {
			if d := containing(c.denied, p); d != "" {
				return sandbox.Policy{}, fmt.Errorf("%s path %s lies inside the denied path %s; drop one of them", c.what, p, d)
			}
		}
	}
	return sandbox.Policy{
		ReadWritePaths: union([]string{ws}, extraWrite),
		ReadOnlyPaths:  extraRead,
		DeniedPaths:    in.denied,
		AllowNetwork:   o.AllowNetwork || !in.caps.NetworkControl,
		EnvAllowlist:   in.envAllow,
		DenyRead:       denyRead,
		DenyWrite:      denyWrite,
	}, nil
}

// homeDenied resolves config.DefaultHomeDeniedPaths under home; nil when
// home is not an absolute path (no $HOME: nothing to resolve against).
func homeDenied(home string) []string {
	if !filepath.IsAbs(home) {
		return nil
	}
	home = filepath.Clean(home)
	var out []string
	for _, rel := range config.DefaultHomeDeniedPaths() {
		out = append(out, filepath.Join(home, filepath.FromSlash(rel)))
	}
	return out
}

// resolvePaths makes each path absolute, taking relative ones from the
// workspace, and cleans it; what names the option in errors.
func resolvePaths(ws, what string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("%s path: empty path", what)
		}
		if strings.ContainsRune(p, 0) {
			return nil, fmt.Errorf("%s path %q: contains NUL", what, p)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// containing returns the first of paths that is p or a directory above
// it, or "". All paths are absolute and clean.
func containing(paths []string, p string) string {
	for _, d := range paths {
		rel, err := filepath.Rel(d, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return d
		}
	}
	return ""
}
