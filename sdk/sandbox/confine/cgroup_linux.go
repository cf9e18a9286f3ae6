package confine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot is where Sparrow may create cgroups: one cgroup v2 directory,
// or a cgroup v1 directory per controller.
type cgroupRoot struct {
	v2 string
	v1 map[string]string // controller → parent directory
}

func (c *cgroupRoot) String() string {
	if c.v2 != "" {
		return "v2 pids,memory"
	}
	var names []string
	for _, k := range []string{"pids", "memory"} {
		if c.v1[k] != "" {
			names = append(names, k)
		}
	}
	return "v1 " + strings.Join(names, ",")
}

func (c *cgroupRoot) has(controller string) bool {
	return c != nil && (c.v2 != "" || c.v1[controller] != "")
}

// detectCgroup finds the cgroup this process is in and checks it may make
// children there with the pids and memory controllers.
func detectCgroup() (*cgroupRoot, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read /proc/self/mountinfo: %w", err)
	}
	v1paths := map[string]string{}
	var v2path string
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2path = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			v1paths[c] = parts[2]
		}
	}
	v1mnt, v2mnt := cgroupMounts(mounts)
	if v2mnt != "" && v2path != "" {
		dir := filepath.Join(v2mnt, v2path)
		ctrl, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		if hasWords(string(ctrl), "pids", "memory") && probeMkdir(dir, "pids.max") {
			return &cgroupRoot{v2: dir}, nil
		}
	}
	root := &cgroupRoot{v1: map[string]string{}}
	for _, c := range []string{"pids", "memory"} {
		mnt, p := v1mnt[c], v1paths[c]
		if mnt == "" || p == "" {
			continue
		}
		dir := filepath.Join(mnt, p)
		if probeMkdir(dir, c+".max") || probeMkdir(dir, c+".limit_in_bytes") {
			root.v1[c] = dir
		}
	}
	if len(root.v1) > 0 {
		return root, nil
	}
	return nil, errors.New("no delegated cgroup v2 with pids and memory, no writable cgroup v1")
}

// cgroupMounts returns the cgroup v1 mount of each controller and the
// cgroup v2 mount.
func cgroupMounts(mountinfo []byte) (v1 map[string]string, v2 string) {
	v1 = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// id parent maj:min root mountpoint options ... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		switch qf[0] {
		case "cgroup2":
			if v2 == "" {
				v2 = pf[4]
			}
		case "cgroup":
			for _, o := range strings.Split(qf[2], ",") {
				if o == "pids" || o == "memory" {
					v1[o] = pf[4]
				}
			}
		}
	}
	return v1, v2
}

func hasWords(s string, words ...string) bool {
	f := strings.Fields(s)
	for _, w := range words {
		found := false
		for _, x := range f {
			found = found || x == w
		}
		if !found {
			return false
		}
	}
	return true
}

// probeMkdir reports whether a child cgroup with the file want can be made
// in dir, removing it again.
func probeMkdir(dir, want string) bool {
	p := filepath.Join(dir, fmt.Sprintf("sparrow-probe-%d", os.Getpid()))
	if err := os.Mkdir(p, 0o755); err != nil {
		return false
	}
	defer os.Remove(p)
	_, err := os.Stat(filepath.Join(p, want))
	return err == nil
}

// sweep removes cgroups an earlier Sparrow left behind (killed before it
// could clean up): only empty ones can be removed, and only those older
// than a minute are tried, so a cgroup another Sparrow just made is safe.
func (c *cgroupRoot) sweep() {
	parents := []string{c.v2}
	for _, p := range c.v1 {
		parents = append(parents, p)
	}
	for _, p := range parents {
		if p == "" {
			continue
		}
		old, _ := filepath.Glob(filepath.Join(p, "sparrow-*"))
		for _, d := range old {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() && time.Since(fi.ModTime()) > time.Minute {
				_ = os.Remove(d)
			}
		}
	}
}

// cgroup is one confined process tree's cgroup (a directory per v1
// controller).
type cgroup struct {
	v2   bool
	dirs []string
}

// newCgroup makes the cgroup and sets its limits.
func (c *cgroupRoot) create(name string, lim Limits) (*cgroup, error) {
	g := &cgroup{v2: c.v2 != ""}
	mk := func(parent string, files ...[2]string) error {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
		g.dirs = append(g.dirs, dir)
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0); err != nil && !(errors.Is(err, os.ErrNotExist) && strings.Contains(f[0], "sw")) {
				return fmt.Errorf("cgroup: set %s: %w", f[0], err)
			}
		}
		return nil
	}
	val := func(n int64, unlimited string) string {
		if n <= 0 {
			return unlimited
		}
		return strconv.FormatInt(n, 10)
	}
	var err error
	if g.v2 {
		err = mk(c.v2, [2]string{"pids.max", val(lim.Pids, "max")}, [2]string{"memory.max", val(lim.MemoryBytes, "max")},
			[2]string{"memory.swap.max", "0"})
	} else {
		if p := c.v1["pids"]; p != "" && lim.Pids > 0 {
			err = mk(p, [2]string{"pids.max", val(lim.Pids, "max")})
		}
		if p := c.v1["memory"]; err == nil && p != "" && lim.MemoryBytes > 0 {
			err = mk(p, [2]string{"memory.limit_in_bytes", val(lim.MemoryBytes, "-1")},
				[2]string{"memory.memsw.limit_in_bytes", val(lim.MemoryBytes, "-1")})
		}
	}
	if err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// procsFiles are the files a process writes its pid to in order to join.
func (g *cgroup) procsFiles() []string {
	out := make([]string, len(g.dirs))
	for i, d := range g.dirs {
		out[i] = filepath.Join(d, "cgroup.procs")
	}
	return out
}

// kill SIGKILLs every process in the cgroup until none is left.
func (g *cgroup) kill() {
	for _, d := range g.dirs {
		if g.v2 && os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0) == nil {
			continue
		}
		for range 50 {
			procs, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			if err != nil || len(bytes.TrimSpace(procs)) == 0 {
				break
			}
			for _, f := range strings.Fields(string(procs)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// oomKilled reports whether the memory limit killed a process.
func (g *cgroup) oomKilled() bool { return g.oomKills() > 0 }

// oomKills counts the processes the memory limit has killed so far
// (oom_kill in memory.events on v2, memory.oom_control on v1).
func (g *cgroup) oomKills() int64 {
	var n int64
	for _, d := range g.dirs {
		for _, f := range []string{"memory.events", "memory.oom_control"} {
			b, err := os.ReadFile(filepath.Join(d, f))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" {
					c, _ := strconv.ParseInt(v, 10, 64)
					n += c
				}
			}
		}
	}
	return n
}

// remove kills what is left and deletes the cgroup.
func (g *cgroup) remove() {
	g.kill()
	for _, d := range g.dirs {
		for range 100 {
			if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}
