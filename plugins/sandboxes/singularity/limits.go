package singularity

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// cgroupsDocs explains what Apptainer needs to apply limits.
const cgroupsDocs = "https://apptainer.org/docs/user/main/cgroups.html"

// limitFlags maps the request's limits to Apptainer's cgroup flags, or
// says why they cannot be applied here (text for the command's stderr).
// Memory is --memory with --memory-swap of the same size, so swap cannot
// extend it; the process count is --pids-limit. Disk and CPU time have no
// Apptainer flag (--cpus caps a rate, not a total) and are refused.
func (b *Singularity) limitFlags(l sandbox.Limits) ([]string, string) {
	switch {
	case l.DiskBytes > 0:
		return nil, "this backend cannot enforce a disk limit: Apptainer has no disk quota flag"
	case l.CPUTime > 0:
		return nil, "this backend cannot enforce a CPU-time limit: Apptainer's --cpus caps a rate, not total CPU time"
	}
	var flags, controllers []string
	if l.MemoryBytes > 0 {
		n := strconv.FormatInt(l.MemoryBytes, 10)
		flags = append(flags, "--memory", n, "--memory-swap", n)
		controllers = append(controllers, "memory")
	}
	if l.MaxPids > 0 {
		flags = append(flags, "--pids-limit", strconv.FormatInt(l.MaxPids, 10))
		controllers = append(controllers, "pids")
	}
	if len(flags) == 0 {
		return nil, ""
	}
	if why := b.cgroupProblem(controllers); why != "" {
		return nil, fmt.Sprintf("cannot enforce a %s limit here: %s (%s)", l.ResourceLimit(), why, cgroupsDocs)
	}
	return flags, ""
}

// cgroupProblem says why Apptainer cannot apply limits with these
// controllers as the plugin's user, or "". Apptainer's documented
// requirements: root may use cgroups v1 or v2; anyone else needs cgroups
// v2 in the unified hierarchy with systemd delegating the controllers to
// the user, reached through the user's D-Bus session (XDG_RUNTIME_DIR and
// DBUS_SESSION_BUS_ADDRESS, apptainer/apptainer#390). `systemd cgroups =
// yes` in apptainer.conf is the default and is not checked.
func (b *Singularity) cgroupProblem(controllers []string) string {
	uid := b.uid()
	if uid == 0 {
		return ""
	}
	if _, err := os.Stat(filepath.Join(b.cgroupRoot, "cgroup.controllers")); err != nil {
		return "a non-root user needs cgroups v2 (the unified hierarchy) and this machine does not mount it at " + b.cgroupRoot
	}
	for _, k := range []string{"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"} {
		if b.getenv(k) == "" {
			return "a non-root user needs a systemd user session and " + k + " is not set"
		}
	}
	f := filepath.Join(b.cgroupRoot, "user.slice", fmt.Sprintf("user-%d.slice", uid), fmt.Sprintf("user@%d.service", uid), "cgroup.controllers")
	data, err := os.ReadFile(f)
	if err != nil {
		return fmt.Sprintf("systemd delegates no cgroup to user %d (%s is missing)", uid, f)
	}
	have := strings.Fields(string(data))
	for _, c := range controllers {
		if !slices.Contains(have, c) {
			return fmt.Sprintf("systemd does not delegate the %s controller to user %d (%s lists %q)", c, uid, f, strings.TrimSpace(string(data)))
		}
	}
	return ""
}
