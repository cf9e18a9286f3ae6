package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/kernel/pluginstall"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// PluginTrust is what Sparrow knows of a plugin's provenance.
type PluginTrust struct {
	// Signer is the fingerprint of the key that signed its release, ""
	// for an unsigned (development) plugin.
	Signer string
	// SignerTrusted says the signer is one of policy.trusted_keys.
	SignerTrusted bool
	// Locked is the version the lock file pins, "" when not locked.
	Locked string
	// Source is the mirror it was installed from, per the lock file.
	Source string
	// Problem says why its signed release does not check out, if so.
	Problem string
}

// LockFilePath is where the plugin lock file lives: beside the project
// config when there is a project, else beside the user config.
func (k *Kernel) LockFilePath() string { return LockFilePath(k.Config.Paths) }

// LockFilePath is where the plugin lock file of a configuration lives.
func LockFilePath(p config.Paths) string {
	if p.ProjectDir != "" {
		return filepath.Join(p.ProjectDir, ".sparrow", lockfile.Name)
	}
	return filepath.Join(filepath.Dir(p.UserFile), lockfile.Name)
}

// Platform is this machine's os/arch, as releases and lock files name it.
func Platform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// Trust returns what is known of a discovered plugin's provenance.
func (k *Kernel) Trust(name string) PluginTrust { return k.trust[name] }

// admit applies the lock file and the policy to one discovered plugin:
// it pins the entry's hash (config pin, else lock, else signed release)
// and returns why the plugin is refused, "" when it may load.
func (k *Kernel) admit(m *pluginhost.Manifest, spec *pluginhost.Spec, lock *lockfile.File, ring plugintrust.KeyRing) string {
	pol := k.Config.Policy
	dir := filepath.Dir(m.File)
	platform := Platform()
	if m.Runtime == pluginhost.RuntimeWASM {
		platform = plugintrust.PlatformWASM
	}
	tr := PluginTrust{}
	entry := lock.Entries[m.Name]
	if entry != nil {
		tr.Locked, tr.Source = entry.Version, entry.Source
	}
	rel, relHash, problem := readRelease(dir, m, platform, ring, &tr)
	tr.Problem = problem
	k.trust[m.Name] = tr

	installed := within(dir, filepath.Join(k.Config.Paths.DataDir, "plugins"))
	switch {
	case pol.Locked && entry == nil:
		return k.refusal("locked", "it is not in the lock file %s; install it with `sparrow plugin install %s`", lock.Path, m.Name)
	case pol.Locked && entry.Version != m.Version.String():
		return k.refusal("locked", "version %s is here, the lock file %s pins %s", m.Version, lock.Path, entry.Version)
	case pol.Locked && !installed:
		return k.refusal("locked", "it is loaded from %s, not installed in the data directory", dir)
	case pol.RequireSignatures && rel == nil && problem == "":
		return k.refusal("require_signatures", "it is unsigned (a development plugin in %s); install a signed release", dir)
	case pol.RequireSignatures && problem != "":
		return k.refusal("require_signatures", "%s", problem)
	case pol.RequireSignatures && !tr.SignerTrusted:
		return k.refusal("require_signatures", "its signer %s is not in policy.trusted_keys", tr.Signer)
	case pol.WASMOnlyFromDataDir && m.Runtime == pluginhost.RuntimeWASM && !installed:
		return k.refusal("wasm_only_from_data_dir", "the module is in %s, outside the installed plugins", dir)
	}
	if why, attr := exceeds(m.Capabilities, pol.MaxCapabilities); why != "" {
		return k.refusal("max_capabilities."+attr, "%s", why)
	}
	lockHash := ""
	if entry != nil {
		lockHash = entry.Hashes[platform]
		if lockHash == "" {
			return fmt.Sprintf("the lock file %s has no hash for %s on %s", lock.Path, m.Name, platform)
		}
	}
	switch {
	case spec.SHA256 != "" && lockHash != "" && spec.SHA256 != lockHash:
		return fmt.Sprintf("%s pins sha256 %s, the lock file %s pins %s", spec.PinnedBy, spec.SHA256, lock.Path, lockHash)
	case spec.SHA256 == "" && lockHash != "":
		spec.SHA256, spec.PinnedBy = lockHash, "the lock file "+lock.Path
	case spec.SHA256 == "" && relHash != "":
		spec.SHA256, spec.PinnedBy = relHash, "its signed release ("+filepath.Join(dir, pluginstall.ReleaseFile)+")"
	}
	return ""
}

// refusal names the policy rule and where it was set.
func (k *Kernel) refusal(rule, format string, args ...any) string {
	return fmt.Sprintf("refused by policy.%s (%s): %s", rule, k.Config.Origins["policy."+rule].String(), fmt.Sprintf(format, args...))
}

// readRelease reads and verifies the signed release beside an installed
// plugin. It returns nil without a problem for an unsigned plugin, and
// the entry's hash on this platform when the release checks out.
func readRelease(dir string, m *pluginhost.Manifest, platform string, ring plugintrust.KeyRing, tr *PluginTrust) (*plugintrust.Release, string, string) {
	data, err := os.ReadFile(filepath.Join(dir, pluginstall.ReleaseFile))
	if os.IsNotExist(err) {
		return nil, "", ""
	}
	if err != nil {
		return nil, "", err.Error()
	}
	sig, err := os.ReadFile(filepath.Join(dir, pluginstall.ReleaseSigFile))
	if err != nil {
		return nil, "", fmt.Sprintf("its release signature is missing: %v", err)
	}
	key, err := plugintrust.Verify(ring, filepath.Join(dir, pluginstall.ReleaseFile), data, sig)
	if !key.IsZero() {
		tr.Signer = key.Fingerprint()
	}
	if _, untrusted := err.(*plugintrust.UntrustedKeyError); err != nil && !untrusted {
		return nil, "", err.Error()
	}
	tr.SignerTrusted = err == nil
	rel, err := plugintrust.ParseRelease(filepath.Join(dir, pluginstall.ReleaseFile), data)
	if err != nil {
		return nil, "", err.Error()
	}
	if rel.Name != m.Name || rel.Version != m.Version.String() {
		return nil, "", fmt.Sprintf("its signed release is %s %s, the manifest says %s %s", rel.Name, rel.Version, m.Name, m.Version)
	}
	p := rel.Platforms[platform]
	if p == nil {
		return nil, "", fmt.Sprintf("its signed release has no build for %s", platform)
	}
	return rel, p.Files[rel.Entry], ""
}

// exceeds says what a plugin declares beyond the policy's bound, and
// which attribute of max_capabilities it breaks first.
func exceeds(c pluginhost.Capabilities, max *config.MaxCapabilities) (why, attr string) {
	if max == nil {
		return "", ""
	}
	var over []string
	note := func(a, what string) {
		if attr == "" {
			attr = a
		}
		over = append(over, what)
	}
	if c.Network && !max.Network {
		note("network", "network")
	}
	for _, p := range c.Paths {
		if max.Paths != nil && !slices.Contains(max.Paths, p) {
			note("paths", "path "+p)
		}
	}
	for _, e := range c.Env {
		if max.Env != nil && !slices.Contains(max.Env, e) {
			note("env", "env "+e)
		}
	}
	if len(over) == 0 {
		return "", ""
	}
	return "it declares " + strings.Join(over, ", ") + ", beyond what the policy allows", attr
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
