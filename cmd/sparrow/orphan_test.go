package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNoOrphans runs the real sparrow binary with the real local sandbox
// plugin running `sleep`, ends sparrow each way a user can, and checks the
// process table: neither the plugin nor the command it ran may survive.
func TestNoOrphans(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	bin := buildSparrow(t)
	plugins := builtPlugins(t)
	cases := []struct {
		name     string
		argv     []string
		end      func(*exec.Cmd)
		wantCode int
	}{
		{"exit", []string{"sh", "-c", "sleep 1"}, nil, 0},
		{"SIGINT", []string{"sleep", "300"}, func(c *exec.Cmd) { c.Process.Signal(syscall.SIGINT) }, 130},
		{"SIGTERM", []string{"sleep", "300"}, func(c *exec.Cmd) { c.Process.Signal(syscall.SIGTERM) }, 143},
		{"SIGKILL", []string{"sleep", "300"}, func(c *exec.Cmd) { c.Process.Kill() }, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			cmd := exec.Command(bin, append([]string{"sandbox", "exec", "--"}, tc.argv...)...)
			cmd.Dir = home
			cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SPARROW_PLUGIN_PATH=" + plugins}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the plugin and its command are both running.
			var tree []proc
			deadline := time.Now().Add(20 * time.Second)
			for {
				tree = descendants(cmd.Process.Pid)
				if hasComm(tree, "sleep") && hasArgv0(tree, "sparrow-plugin-local-hardened") {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("plugin and command never appeared; tree %v; stderr:\n%s", tree, stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if tc.end != nil {
				tc.end(cmd)
			}
			err := cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if tc.wantCode >= 0 && code != tc.wantCode {
				t.Errorf("sparrow exited %d (%v), want %d; stderr:\n%s", code, err, tc.wantCode, stderr.String())
			}
			// The kernel delivers the parent-death signal asynchronously;
			// give it a moment, then nothing from the tree may be alive.
			deadline = time.Now().Add(5 * time.Second)
			for {
				var alive []proc
				for _, p := range tree {
					if isAlive(p) {
						alive = append(alive, p)
					}
				}
				if len(alive) == 0 {
					return
				}
				if time.Now().After(deadline) {
					for _, p := range alive {
						syscall.Kill(p.pid, syscall.SIGKILL)
					}
					t.Fatalf("outlived sparrow (%s): %v", tc.name, alive)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

type proc struct {
	pid   int
	start string // start time in clock ticks, to tell a reused pid apart
	comm  string
	argv0 string
}

func (p proc) String() string { return fmt.Sprintf("%d(%s)", p.pid, p.argv0) }

// readProc returns pid's stat fields after the command name.
func readProc(pid int) (proc, int, string, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return proc{}, 0, "", false
	}
	s := string(raw)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < 0 {
		return proc{}, 0, "", false
	}
	fields := strings.Fields(s[close+2:])
	ppid, _ := strconv.Atoi(fields[1])
	p := proc{pid: pid, comm: s[open+1 : close], start: fields[19]}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		p.argv0, _, _ = strings.Cut(string(cmdline), "\x00")
	}
	return p, ppid, fields[0], true
}

// descendants lists every process below root.
func descendants(root int) []proc {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ppid, _, ok := readProc(pid); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
		queue = queue[1:]
	}
	return out
}

// isAlive reports whether the very process p (same pid, same start time)
// still runs; a zombie awaiting its reaper counts as gone.
func isAlive(p proc) bool {
	now, _, state, ok := readProc(p.pid)
	return ok && now.start == p.start && state != "Z"
}

func hasComm(ps []proc, comm string) bool {
	for _, p := range ps {
		if p.comm == comm {
			return true
		}
	}
	return false
}

func hasArgv0(ps []proc, argv0 string) bool {
	for _, p := range ps {
		if filepath.Base(p.argv0) == argv0 {
			return true
		}
	}
	return false
}
