package confine

import (
	"strconv"
	"strings"
)

// Report is what Probe found: which primitives this machine offers and,
// for a confined process, which are in force.
type Report struct {
	// Bwrap is the bubblewrap binary and its version ("/usr/bin/bwrap 0.8.0"),
	// empty when none works.
	Bwrap string
	// UserNS is true when bubblewrap could create a user namespace.
	UserNS bool
	// Landlock is the kernel's Landlock ABI version, 0 when unavailable.
	Landlock int
	// Seccomp is true when seccomp filters can be installed.
	Seccomp bool
	// Cgroup describes the cgroup Sparrow can create ("v2 /sys/fs/cgroup/...",
	// "v1 pids,memory"), empty when none.
	Cgroup string
	// Missing names each required primitive that is absent with how to get
	// it; a non-empty Missing means Command refuses.
	Missing []string
	// Fallbacks names each best primitive that is absent and what is used
	// instead; the policy still holds.
	Fallbacks []string

	// cgroups is where Command makes cgroups; nil for none.
	cgroups *cgroupRoot
}

// Usable reports whether confined processes can run here.
func (r Report) Usable() bool { return len(r.Missing) == 0 }

// Protections lists the protections in force, one phrase each, for
// `sparrow doctor`, `sandbox list` and the RunStarted event.
func (r Report) Protections() []string {
	var out []string
	if r.Bwrap != "" {
		ns := "namespaces user,mount,pid,ipc,uts,cgroup,net (" + r.Bwrap + ")"
		if !r.UserNS {
			ns = "namespaces mount,pid,ipc,uts,net via setuid " + r.Bwrap
		}
		out = append(out, ns)
	}
	if r.Landlock > 0 {
		out = append(out, "landlock ABI "+strconv.Itoa(r.Landlock))
	}
	if r.Seccomp {
		out = append(out, "seccomp filter", "no_new_privs")
	}
	if r.Cgroup != "" {
		out = append(out, "cgroup "+r.Cgroup)
	}
	out = append(out, "rlimits")
	return out
}

// String is Protections and Fallbacks on one line.
func (r Report) String() string {
	s := strings.Join(r.Protections(), "; ")
	if len(r.Fallbacks) > 0 {
		s += " (fallbacks: " + strings.Join(r.Fallbacks, "; ") + ")"
	}
	if len(r.Missing) > 0 {
		s += " (missing: " + strings.Join(r.Missing, "; ") + ")"
	}
	return s
}
