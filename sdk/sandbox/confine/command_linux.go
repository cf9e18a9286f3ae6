package confine

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// systemDirs make up the read-only system view (Spec.System).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc"}

// SystemSecrets are the files and directories under /etc the system view
// hides: password hashes, sudo rules, host private keys, stored network
// and service credentials.
var SystemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
	"/etc/ssl/private", "/etc/krb5.keytab", "/etc/NetworkManager/system-connections",
	"/etc/wpa_supplicant", "/etc/docker/key.json", "/etc/letsencrypt", "/etc/pki/private",
}

// Cmd is a confined process ready to start: bubblewrap, whose init joins
// the cgroup when limits need one. Set Stdin, Stdout and Stderr, Start or Run
// it, then call Cleanup.
type Cmd struct {
	*exec.Cmd
	cg *cgroup
	// files are passed to bubblewrap from descriptor 3: the spec's extra
	// files (the first own of them, not closed here) then hiding data.
	files []*os.File
	own   int
	// Notes say which fallbacks this process runs under ("memory capped
	// per process: no cgroup"); empty when every primitive was there.
	Notes []string
	// child is the host pid of the sandbox's first process (bubblewrap's
	// init in the new pid namespace), read from bubblewrap's info pipe; 0
	// until it arrives.
	child atomic.Int64
}

// readInfo reads bubblewrap's {"child-pid": N} from r.
func (c *Cmd) readInfo(r *os.File) {
	defer r.Close()
	var info struct {
		ChildPid int64 `json:"child-pid"`
	}
	if json.NewDecoder(r).Decode(&info) == nil {
		c.child.Store(info.ChildPid)
	}
}

// Signal delivers sig to the program and everything it started inside
// the sandbox, as a terminal delivers ^C to a foreground group
// (bubblewrap itself would die of it rather than pass it on; its init,
// which leads the sandbox's session, is left out). It reports false when
// the program is not known yet or is gone.
func (c *Cmd) Signal(sig syscall.Signal) bool {
	init := int(c.child.Load())
	if init == 0 {
		return false
	}
	sent := false
	queue := children(init)
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], children(pid)...)
		sent = syscall.Kill(pid, sig) == nil || sent
	}
	return sent
}

// children lists a process's child processes.
func children(pid int) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var out []int
	for _, t := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// Cleanup kills whatever is left of the process tree and releases the
// cgroup. Call it once the process has been waited for (or never started).
func (c *Cmd) Cleanup() {
	c.closeFiles()
	if c.cg != nil {
		c.cg.remove()
	}
}

// closeFiles closes the descriptors Command opened for bubblewrap.
func (c *Cmd) closeFiles() {
	for _, f := range c.files[c.own:] {
		f.Close()
	}
}

// Kill kills the whole tree at once: the cgroup when there is one, and
// bubblewrap, whose death takes the sandbox's pid namespace with it.
func (c *Cmd) Kill() {
	if c.cg != nil {
		c.cg.kill()
	}
	if c.Process != nil {
		_ = c.Process.Kill()
	}
}

// OOMKilled reports whether the memory limit killed a process.
func (c *Cmd) OOMKilled() bool { return c.cg != nil && c.cg.oomKilled() }

// Command prepares spec under the primitives rep found. It refuses, saying
// what is missing, when rep is not usable or a limit cannot be enforced.
func Command(spec Spec, rep Report) (*Cmd, error) {
	if !rep.Usable() {
		return nil, fmt.Errorf("cannot confine: missing %s", strings.Join(rep.Missing, "; "))
	}
	if len(spec.Argv) == 0 {
		return nil, errors.New("confine: empty argv")
	}
	return newCmd(spec, rep, nil)
}

// newCmd lays out bubblewrap and the init's plan for spec. With control
// set, the sandbox's process is a session server (serverArg) that serves
// the control socket, as pid 1 of the sandbox, instead of a program.
func newCmd(spec Spec, rep Report, control *os.File) (*Cmd, error) {
	if spec.Init != "" && !filepath.IsAbs(spec.Init) {
		return nil, fmt.Errorf("confine: init %q is not an absolute path", spec.Init)
	}
	if !filepath.IsAbs(spec.Dir) {
		return nil, fmt.Errorf("confine: working directory %q is not an absolute path", spec.Dir)
	}
	c := &Cmd{files: slices.Clone(spec.ExtraFiles), own: len(spec.ExtraFiles)}
	plan := initPlan{Keep: len(spec.ExtraFiles), Argv: spec.Argv, Landlock: rep.Landlock, FSize: spec.Limits.FileBytes}
	if spec.Limits.CPUTime > 0 {
		plan.CPU = max(1, int64(spec.Limits.CPUTime.Seconds()))
	}
	lim := spec.Limits
	root := rep.cgroups
	if lim.Pids > 0 && !root.has("pids") {
		if os.Geteuid() == 0 {
			return nil, errors.New("a process limit needs a cgroup here (root is exempt from RLIMIT_NPROC); delegate a cgroup v2 with the pids controller, run Sparrow as a user, or drop the limit")
		}
		plan.NProc = lim.Pids
		c.Notes = append(c.Notes, "processes limited by RLIMIT_NPROC: no cgroup")
		lim.Pids = 0
	}
	if lim.MemoryBytes > 0 && !root.has("memory") {
		plan.AS = lim.MemoryBytes
		c.Notes = append(c.Notes, "memory capped per process (address space): no cgroup")
		lim.MemoryBytes = 0
	}
	if lim.Pids > 0 || lim.MemoryBytes > 0 {
		g, err := root.create("sparrow-"+randomName(), lim)
		if err != nil {
			return nil, err
		}
		c.cg = g
		for _, p := range g.procsFiles() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				c.Cleanup()
				return nil, fmt.Errorf("cgroup: %w", err)
			}
			c.files = append(c.files, f)
			plan.Cgroups = append(plan.Cgroups, 2+len(c.files))
		}
	}
	args, err := c.bwrapArgs(spec, rep.UserNS, &plan)
	if err != nil {
		c.Cleanup()
		return nil, err
	}
	mode := initArg
	if control != nil {
		// As pid 1 the server cannot be killed from inside, and what a
		// command leaves behind re-parents to it.
		mode = serverArg
		args = append(args, "--as-pid-1")
		c.files = append(c.files, control)
		plan.Control = 2 + len(c.files)
		plan.Scratch = scratchDirs(spec)
	}
	js, err := json.Marshal(plan)
	if err != nil {
		c.Cleanup()
		return nil, fmt.Errorf("confine: %w", err)
	}
	init := initPath
	if spec.Init == "" {
		self, err := os.Open("/proc/self/exe")
		if err != nil {
			c.Cleanup()
			return nil, fmt.Errorf("confine: open own executable: %w", err)
		}
		c.files = append(c.files, self)
		init = "/proc/self/fd/" + strconv.Itoa(2+len(c.files))
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		c.Cleanup()
		return nil, fmt.Errorf("confine: %w", err)
	}
	c.files = append(c.files, infoW)
	go c.readInfo(infoR)
	args = append(args, "--info-fd", strconv.Itoa(2+len(c.files)), "--", init, mode, string(js))
	bwrap := strings.Fields(rep.Bwrap)[0]
	argv := append([]string{bwrap}, args...)
	c.Cmd = &exec.Cmd{Path: argv[0], Args: argv, Env: slices.Clone(spec.Env), ExtraFiles: c.files}
	if c.Cmd.Env == nil {
		c.Cmd.Env = []string{}
	}
	return c, nil
}

func randomName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// bwrapArgs lays out the sandbox; userns says bubblewrap can make a user
// namespace (else it is setuid). Later mounts cover earlier ones, so the
// order is: system view, /proc, /dev, /tmp, home, the spec's paths from
// the shallowest down, then protected and hidden paths on top.
func (c *Cmd) bwrapArgs(spec Spec, userns bool, plan *initPlan) ([]string, error) {
	a := []string{"--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try", "--hostname", "sparrow"}
	if userns {
		// A setuid bubblewrap (where user namespaces are denied) makes
		// none and drops its privileges itself.
		a = append(a, "--unshare-user", "--disable-userns")
	}
	if !spec.Network {
		a = append(a, "--unshare-net")
	}
	if spec.System {
		for _, d := range systemDirs {
			fi, err := os.Lstat(d)
			switch {
			case err != nil:
				continue
			case fi.Mode()&os.ModeSymlink != 0:
				target, err := os.Readlink(d)
				if err != nil {
					return nil, fmt.Errorf("confine: %s: %w", d, err)
				}
				a = append(a, "--symlink", target, d)
			default:
				a = append(a, "--ro-bind", d, d)
				plan.ReadOnly = append(plan.ReadOnly, d)
			}
		}
		if spec.Network {
			// resolv.conf often points into /run, which stays hidden.
			if r, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !strings.HasPrefix(r, "/etc/") {
				a = append(a, "--ro-bind", r, r)
				plan.ReadOnly = append(plan.ReadOnly, r)
			}
		}
	}
	tmp := spec.Limits.TmpBytes
	if tmp <= 0 {
		tmp = DefaultTmpBytes
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--size", strconv.FormatInt(tmp, 10), "--tmpfs", "/tmp")
	plan.ReadOnly = append(plan.ReadOnly, "/proc")
	plan.Devices = append(plan.Devices, "/dev")
	plan.ReadWrite = append(plan.ReadWrite, "/tmp", "/dev/shm")
	if spec.Home != "" && spec.Home != "/" {
		if spec.HomeDir != "" {
			a = append(a, "--bind", spec.HomeDir, spec.Home)
		} else {
			a = append(a, "--size", strconv.FormatInt(tmp, 10), "--tmpfs", spec.Home)
		}
		plan.ReadWrite = append(plan.ReadWrite, spec.Home)
	}
	type bind struct {
		path string
		rw   bool
	}
	var binds []bind
	for _, p := range spec.ReadOnly {
		binds = append(binds, bind{filepath.Clean(p), false})
	}
	for _, p := range spec.ReadWrite {
		binds = append(binds, bind{filepath.Clean(p), true})
	}
	slices.SortStableFunc(binds, func(x, y bind) int { return strings.Count(x.path, "/") - strings.Count(y.path, "/") })
	for _, b := range binds {
		if !filepath.IsAbs(b.path) {
			return nil, fmt.Errorf("confine: path %q is not absolute", b.path)
		}
		if _, err := os.Stat(b.path); err != nil {
			return nil, fmt.Errorf("confine: path %s cannot be shown to the command: %w", b.path, errors.Unwrap(err))
		}
		if b.rw {
			a = append(a, "--bind", b.path, b.path)
			plan.ReadWrite = append(plan.ReadWrite, b.path)
		} else {
			a = append(a, "--ro-bind", b.path, b.path)
			plan.ReadOnly = append(plan.ReadOnly, b.path)
		}
	}
	for _, p := range spec.Protected {
		if _, err := os.Lstat(p); err == nil {
			a = append(a, "--ro-bind", p, p)
		}
	}
	hidden, err := c.hide(spec)
	if err != nil {
		return nil, err
	}
	a = append(a, hidden...)
	if spec.Init != "" {
		a = append(a, "--ro-bind", spec.Init, initPath)
	}
	a = append(a, "--chdir", spec.Dir)
	return a, nil
}

// hide covers each hidden path that exists, and what a hidden symlink
// points to, with an empty read-only directory or file.
func (c *Cmd) hide(spec Spec) ([]string, error) {
	var a []string
	var seen []string
	var add func(p string, depth int) error
	add = func(p string, depth int) error {
		p = filepath.Clean(p)
		if slices.Contains(seen, p) || depth > 8 {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil || !visible(spec, p) {
			return nil
		}
		seen = append(seen, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := filepath.EvalSymlinks(p); err == nil {
				return add(t, depth+1)
			}
		case fi.IsDir():
			a = append(a, "--tmpfs", p, "--remount-ro", p)
		default:
			f, err := os.Open(os.DevNull)
			if err != nil {
				return fmt.Errorf("confine: hide %s: %w", p, err)
			}
			c.files = append(c.files, f)
			a = append(a, "--perms", "0444", "--ro-bind-data", strconv.Itoa(2+len(c.files)), p)
		}
		return nil
	}
	for _, p := range spec.Hidden {
		if err := add(p, 0); err != nil {
			return nil, err
		}
	}
	if spec.System {
		for _, p := range SystemSecrets {
			if err := add(p, 0); err != nil {
				return nil, err
			}
		}
		keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
		for _, p := range keys {
			if err := add(p, 0); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

// visible reports whether p lies below a path the spec binds; anything
// else is not in the sandbox at all and needs no hiding.
func visible(spec Spec, p string) bool {
	roots := append(append([]string{}, spec.ReadOnly...), spec.ReadWrite...)
	if spec.System {
		roots = append(roots, systemDirs...)
	}
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}
