package confine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Probe finds which primitives work here. It starts bubblewrap once to see
// whether it can make a user namespace, so callers keep the result.
func Probe(ctx context.Context) Report { return probe(ctx, probeBwrap) }

// probe is Probe with bubblewrap's check given: ProbeCached passes one
// that remembers its answer.
func probe(ctx context.Context, probeBwrap func(ctx context.Context, bwrap string) (string, bool, error)) Report {
	var r Report
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		r.Missing = append(r.Missing, "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)")
	} else {
		r.Bwrap, r.UserNS, err = probeBwrap(ctx, bwrap)
		if err != nil {
			r.Missing = append(r.Missing, err.Error())
		}
	}
	if abi, err := ll.LandlockGetABIVersion(); err == nil && abi > 0 {
		r.Landlock = abi
	} else {
		r.Fallbacks = append(r.Fallbacks, "no Landlock (kernel older than 5.13, or landlock missing from the lsm= boot parameter): the mount namespace alone keeps the filesystem view")
	}
	if st, err := os.ReadFile("/proc/self/status"); err == nil && bytes.Contains(st, []byte("\nSeccomp:")) && seccompArch {
		r.Seccomp = true
	} else if !seccompArch {
		r.Missing = append(r.Missing, "a seccomp filter for "+runtime.GOARCH+" (Sparrow has one for amd64 and arm64)")
	} else {
		r.Missing = append(r.Missing, "seccomp filters (a kernel built with CONFIG_SECCOMP_FILTER)")
	}
	if cg, err := detectCgroup(); err == nil {
		r.Cgroup = cg.String()
		r.cgroups = cg
		cg.sweep()
	} else {
		r.Fallbacks = append(r.Fallbacks, "no cgroup Sparrow may create ("+err.Error()+"): memory is capped per process (address space), processes by RLIMIT_NPROC, which does not bind root")
	}
	return r
}

// probeBwrap reports bubblewrap's version and whether it can create a user
// namespace (the unprivileged path); a setuid bubblewrap works without.
func probeBwrap(ctx context.Context, bwrap string) (version string, userns bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bwrap, "--version").Output()
	version = bwrap
	if f := strings.Fields(string(out)); len(f) == 2 {
		version = bwrap + " " + f[1]
	}
	try := func(extra ...string) ([]byte, error) {
		args := append(extra, "--unshare-pid", "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "--", "/bin/true")
		cmd := exec.CommandContext(ctx, bwrap, args...)
		cmd.Env = []string{}
		return cmd.CombinedOutput()
	}
	out, uerr := try("--unshare-user", "--disable-userns")
	if uerr == nil {
		return version, true, nil
	}
	if fi, serr := os.Stat(bwrap); serr == nil && fi.Mode()&os.ModeSetuid != 0 {
		if _, err := try(); err == nil {
			return version, false, nil
		}
	}
	msg := strings.TrimSpace(string(out))
	if msg == "" {
		msg = uerr.Error()
	}
	return version, false, &missingError{"unprivileged user namespaces (" + msg + "); enable them (sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04+) or install bubblewrap setuid root"}
}

type missingError struct{ s string }

func (e *missingError) Error() string { return e.s }
