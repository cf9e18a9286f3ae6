package main

// The escape suite: every attack class of issue 8 run through the real CLI,
// `sparrow sandbox exec --backend local-hardened -- sh -c SCRIPT`, as root
// and as an unprivileged user. The attacks are in escape_attacks_test.go;
// this file plants the secrets, runs sparrow, and judges what came back.
//
// Every run gets a fresh fixture: a fake $HOME full of credentials, a git
// workspace inside it with a .env, a directory outside both, and sparrow's
// own environment and fd 3 carrying secrets too. All secrets hold a marker
// that starts with secretPrefix; whatever the attack, no marker may reach
// the command's output, nothing outside the workspace may change, the
// workspace's protected paths may not change or appear, and no process the
// command started may outlive it. Each attack adds its own checks.
//
// TestEscapeAttacksAreReal runs the attacks marked `local` against the
// local backend, which isolates nothing, and requires each to get through:
// an attack that cannot fail there proves nothing when it fails under
// local-hardened.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

const (
	// secretPrefix starts every planted secret; it never appears in a
	// script, a path or a tag, so seeing it in output is a leak.
	secretPrefix = "sparrow-escape-secret-"
	// escapeUser is the unprivileged account the suite runs as when
	// $SPARROW_ESCAPE_USER does not name another.
	escapeUser = "sparrow-escape"
	// escapeParallel is how many sparrow invocations run at once; most of
	// the time is spent waiting, so this is above the CPU count.
	escapeParallel = 6
	// sparrowDeadline bounds one invocation; an attack still running
	// after it hung sparrow, which is a failure of its own.
	sparrowDeadline = 90 * time.Second
)

// attack is one hostile (or, for sanity cases, ordinary) command.
type attack struct {
	// class is one of the classes of issue 8, or "sanity".
	class, name string
	// script runs as `sh -c prelude+script`; @NAME@ placeholders are
	// replaced by fixture values (see fixture.vars).
	script string
	// flags go to `sparrow sandbox exec` before --; placeholders apply.
	flags []string
	// env is extra NAME=VALUE for sparrow's own environment.
	env []string
	// setup prepares what the attack needs (host processes, listeners,
	// files); it runs before the host is snapshotted.
	setup func(*fixture) error
	// check returns what the attack achieved, beyond what every attack is
	// checked for; for a sanity case, what did not work.
	check func(*fixture, *result) []string
	// local marks an attack that gets through the local backend as root:
	// TestEscapeAttacksAreReal proves it there.
	local bool
	// tty runs sparrow on a pseudo-terminal (stdout and stderr merged).
	tty bool
	// exclusive runs the attack with nothing else running: it exhausts
	// something shared (the user's process count, memory, the disk the
	// disk watch samples).
	exclusive bool
}

func (a attack) sanity() bool { return a.class == "sanity" }

// runner is the identity sparrow runs as.
type runner struct {
	name     string // "root" or "user", for test names
	username string
	uid, gid int
	// setpriv drops from root to uid/gid before starting sparrow.
	setpriv bool
}

func (r runner) unprivileged() bool { return r.uid != 0 }

// command runs name as the runner, killed when ctx is done.
func (r runner) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if r.setpriv {
		args = append([]string{"--reuid", strconv.Itoa(r.uid), "--regid", strconv.Itoa(r.gid), "--init-groups", "--", name}, args...)
		name = "setpriv"
	}
	return exec.CommandContext(ctx, name, args...)
}

// escapeEnv is what every run shares: the binary, the plugins, the base
// directory the fixtures live in and the identities to run as.
type escapeEnv struct {
	bin, plugins, base string
	runners            []runner
	// hostIP is a non-loopback address of this machine, "" if none.
	hostIP string
	// exclusive is held for writing by an exclusive run, for reading by
	// every other.
	exclusive sync.RWMutex
	// repo is the template workspace (see template).
	repoOnce sync.Once
	repo     string
	repoErr  error
}

// run is one attack to run as one identity against one backend; its
// outcome arrives on out.
type run struct {
	name, backend string
	a             attack
	r             runner
	idx           int
	out           chan outcome
}

func newEscapeEnv(t *testing.T) *escapeEnv {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("local-hardened is Linux only; elsewhere it exits 127 (sandbox_exec.txtar)")
	}
	e := &escapeEnv{hostIP: hostIPv4()}
	e.runners = escapeRunners(t)
	// Root keeps the fixtures under /home, where a user's files are; a
	// user cannot write there and gets a temporary directory.
	parent := ""
	if os.Geteuid() == 0 {
		parent = "/home"
	}
	base, err := os.MkdirTemp(parent, "sparrow-escape-")
	if err != nil {
		t.Fatalf("escape base: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	e.base = base
	e.bin = filepath.Join(base, "bin", "sparrow")
	if err := os.MkdirAll(filepath.Dir(e.bin), 0o755); err != nil {
		t.Fatal(err)
	}
	built := buildSparrow(t)
	if err := copyFile(built, e.bin, 0o755); err != nil {
		t.Fatalf("copy sparrow: %v", err)
	}
	// Plugins are confined by sparrow-init, as `make install` lays it out.
	if err := copyFile(filepath.Join(filepath.Dir(built), "sparrow-init"), filepath.Join(filepath.Dir(e.bin), "sparrow-init"), 0o755); err != nil {
		t.Fatalf("copy sparrow-init: %v", err)
	}
	// One state directory per identity, shared by its runs, as a user's
	// is: the backend keeps its init binary there.
	for _, r := range e.runners {
		dir := filepath.Join(base, "xdg-"+r.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if r.setpriv {
			os.Chown(dir, r.uid, r.gid)
		}
	}
	e.plugins = builtPlugins(t)
	// The unprivileged run reads the plugins too.
	filepath.WalkDir(e.plugins, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return e
}

// escapeRunners is root and the unprivileged user when the test runs as
// root (creating the user if need be), else the current user alone.
func escapeRunners(t *testing.T) []runner {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Logf("not root: running every attack as uid %d only (run as root for the root and unprivileged passes)", os.Geteuid())
		me, _ := user.Current()
		username := strconv.Itoa(os.Getuid())
		if me != nil {
			username = me.Username
		}
		return []runner{{name: "user", username: username, uid: os.Getuid(), gid: os.Getgid()}}
	}
	name := os.Getenv("SPARROW_ESCAPE_USER")
	if name == "" {
		name = escapeUser
	}
	u, err := user.Lookup(name)
	if err != nil && name == escapeUser {
		out, uerr := exec.Command("useradd", "--system", "--create-home", name).CombinedOutput()
		if uerr != nil {
			t.Fatalf("useradd %s: %v\n%s", name, uerr, out)
		}
		u, err = user.Lookup(name)
	}
	if err != nil {
		t.Fatalf("unprivileged user %s: %v", name, err)
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("setpriv (util-linux) runs sparrow as %s: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return []runner{{name: "root", username: "root"}, {name: "user", username: name, uid: uid, gid: gid, setpriv: true}}
}

// outcome is what judging one attack found.
type outcome struct {
	skip       string   // why the attack cannot run here
	err        error    // the harness failed, not the sandbox
	violations []string // what got through (or, for sanity, what broke)
	script     string
	flags      []string
	res        *result
}

// runAll runs each run as a subtest, reporting it with reportOutcome
// and counting it in sum. Subtests that -run leaves out are not run at
// all; the rest run escapeParallel at a time, in order.
func (e *escapeEnv) runAll(t *testing.T, runs []*run, wantLeak bool, sum *tally) {
	t.Helper()
	var selected []*run
	for _, r := range runs {
		r.out = make(chan outcome, 1)
		t.Run(r.name, func(t *testing.T) {
			selected = append(selected, r)
			// Parallel subtests wait here until the loop is done and
			// the runs are started.
			t.Parallel()
			o := <-r.out
			reportOutcome(t, r.a, o, wantLeak)
			if o.skip == "" && o.err == nil {
				sum.add(r.a.class, r.r.name, (len(o.violations) > 0) == wantLeak)
			}
		})
	}
	e.start(selected)
}

// start runs the runs in order, escapeParallel at a time, in the
// background; each outcome arrives on its run's channel.
func (e *escapeEnv) start(runs []*run) {
	queue := make(chan *run, len(runs))
	for _, r := range runs {
		queue <- r
	}
	close(queue)
	for range escapeParallel {
		go func() {
			for r := range queue {
				if r.a.exclusive {
					e.exclusive.Lock()
					r.out <- e.try(r.backend, r.a, r.r, r.idx)
					e.exclusive.Unlock()
					continue
				}
				e.exclusive.RLock()
				r.out <- e.try(r.backend, r.a, r.r, r.idx)
				e.exclusive.RUnlock()
			}
		}()
	}
}

// try plants a fixture, runs the attack and judges it.
func (e *escapeEnv) try(backend string, a attack, r runner, idx int) (o outcome) {
	f, err := newFixture(e, r, idx)
	if err != nil {
		return outcome{err: fmt.Errorf("fixture: %w", err)}
	}
	defer f.close()
	if a.setup != nil {
		if err := a.setup(f); err != nil {
			var skip skipError
			if errors.As(err, &skip) {
				return outcome{skip: string(skip)}
			}
			return outcome{err: fmt.Errorf("setup: %w", err)}
		}
	}
	if err := f.own(); err != nil {
		return outcome{err: err}
	}
	before, err := f.snapshot()
	if err != nil {
		return outcome{err: fmt.Errorf("snapshot before: %w", err)}
	}
	o.script = f.expand(a.script)
	if strings.Contains(o.script, secretPrefix) {
		return outcome{err: fmt.Errorf("the script names a secret itself; attacks must find them"), script: o.script}
	}
	for _, fl := range a.flags {
		o.flags = append(o.flags, f.expand(fl))
	}
	var env []string
	for _, kv := range a.env {
		env = append(env, f.expand(kv))
	}
	args := []string{"sandbox", "exec", "--backend", backend, "--workspace", f.ws}
	args = append(append(args, o.flags...), "--", "sh", "-c", prelude+o.script)
	res, err := f.sparrow(args, env, a.tty)
	if err != nil {
		return outcome{err: err, script: o.script, flags: o.flags}
	}
	o.res = res
	o.violations = f.judge(before, res)
	if a.check != nil {
		o.violations = append(o.violations, a.check(f, res)...)
	}
	return o
}

// result is what one sparrow invocation did.
type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
	// hung is set when sparrow had to be killed at sparrowDeadline.
	hung bool
	// outBytes and errBytes count all output, including what the capped
	// buffers dropped.
	outBytes, errBytes int64
}

// cappedBuffer keeps the first max bytes and counts the rest, so a
// runaway output cannot exhaust the test's memory.
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
	n   int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += int64(len(p))
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// sparrow runs the sparrow binary as the fixture's runner, with fd 3 open
// on a secret, and waits for it and every process the attack tagged.
func (f *fixture) sparrow(args, extraEnv []string, tty bool) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sparrowDeadline)
	defer cancel()
	cmd := f.runner.command(ctx, f.env.bin, args...)
	cmd.Dir = f.ws
	cmd.Env = append(f.sparrowEnv(), extraEnv...)
	fd3, err := os.Open(f.fd3)
	if err != nil {
		return nil, err
	}
	defer fd3.Close()
	cmd.ExtraFiles = []*os.File{fd3}
	stdout := &cappedBuffer{max: 4 << 20}
	stderr := &cappedBuffer{max: 1 << 20}
	start := time.Now()
	if tty {
		err = runOnTTY(cmd, stdout)
	} else {
		cmd.Stdin = strings.NewReader("")
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.WaitDelay = 5 * time.Second
		err = cmd.Run()
	}
	res := &result{elapsed: time.Since(start), stdout: stdout.String(), stderr: stderr.String(), outBytes: stdout.n, errBytes: stderr.n, hung: ctx.Err() != nil}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil && !res.hung:
		return nil, fmt.Errorf("start sparrow: %w", err)
	}
	return res, nil
}

// runOnTTY runs cmd with a new pseudo-terminal as its controlling terminal
// and stdin/stdout/stderr, copying what the terminal shows into out.
func runOnTTY(cmd *exec.Cmd, out io.Writer) error {
	tty, err := pty.Start(cmd)
	if err != nil {
		return fmt.Errorf("pty: %w", err)
	}
	defer tty.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(out, tty) // ends with EIO once the last holder of the terminal exits
		close(done)
	}()
	err = cmd.Wait()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	return err
}

// judge applies the checks every attack gets.
func (f *fixture) judge(before snapshot, res *result) []string {
	var v []string
	if res.hung {
		v = append(v, fmt.Sprintf("sparrow did not return within %s and was killed", sparrowDeadline))
	}
	for _, s := range []struct{ name, text string }{{"stdout", res.stdout}, {"stderr", res.stderr}} {
		if i := strings.Index(s.text, secretPrefix); i >= 0 {
			v = append(v, fmt.Sprintf("a planted secret reached %s: %q", s.name, excerpt(s.text, i)))
		}
		if i := strings.Index(s.text, "PRIVATE KEY-----"); i >= 0 {
			v = append(v, fmt.Sprintf("a private key reached %s: %q", s.name, excerpt(s.text, i)))
		}
		if loc := shadowLine.FindStringIndex(s.text); loc != nil {
			v = append(v, fmt.Sprintf("an /etc/shadow line reached %s: %q", s.name, excerpt(s.text, loc[0])))
		}
	}
	if alive := f.survivors(); len(alive) > 0 {
		v = append(v, fmt.Sprintf("processes started by the command outlived it: %s", strings.Join(alive, "; ")))
	}
	after, err := f.snapshot()
	if err != nil {
		return append(v, fmt.Sprintf("snapshot after: %v", err))
	}
	v = append(v, diffSnapshots("outside the workspace", before.outside, after.outside)...)
	v = append(v, diffSnapshots("protected path in the workspace", before.protected, after.protected)...)
	if before.hooksPath != after.hooksPath {
		v = append(v, fmt.Sprintf("the host's git config core.hooksPath is now %q (was %q)", after.hooksPath, before.hooksPath))
	}
	v = append(v, f.planted()...)
	return v
}

func excerpt(s string, i int) string {
	lo, hi := max(0, i-40), min(len(s), i+80)
	return s[lo:hi]
}

// survivors lists the host processes whose command line holds the
// fixture's tag, giving the sandbox a moment to finish killing, then
// kills whatever is left so one failure does not leak into the next.
func (f *fixture) survivors() []string {
	var alive []string
	deadline := time.Now().Add(3 * time.Second)
	for {
		alive = tagged(f.tag)
		if len(alive) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(alive) > 0 {
		for _, p := range alive {
			pid, _ := strconv.Atoi(strings.Fields(p)[0])
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return alive
}

// tagged lists "pid cmdline" for every process whose command line holds tag.
func tagged(tag string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(raw, []byte(tag)) {
			continue
		}
		if _, _, state, ok := readProc(pid); ok && state == "Z" {
			continue
		}
		cmdline := strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " "))
		if len(cmdline) > 80 {
			cmdline = cmdline[:80] + "…"
		}
		out = append(out, e.Name()+" "+cmdline)
	}
	return out
}

// pwnDirs are host directories an attack may try to drop a file into; a
// file named with the fixture's pwn name there is a write that got out.
var pwnDirs = []string{"/tmp", "/var/tmp", "/dev/shm", "/usr/local", "/etc", "/root", "/home"}

// planted reports (and removes) files an attack dropped into pwnDirs.
func (f *fixture) planted() []string {
	var v []string
	for _, d := range pwnDirs {
		hits, _ := filepath.Glob(filepath.Join(d, "*"+f.pwn+"*"))
		for _, h := range hits {
			v = append(v, "the command wrote "+h+" on the host")
			os.RemoveAll(h)
		}
	}
	return v
}

// reportOutcome fails t with everything needed to see what happened;
// with SPARROW_ESCAPE_VERBOSE set it shows the same for attacks that held.
func reportOutcome(t *testing.T, a attack, o outcome, wantLeak bool) {
	t.Helper()
	switch {
	case o.skip != "":
		t.Skip(o.skip)
	case o.err != nil:
		t.Fatalf("harness: %v", o.err)
	}
	got := len(o.violations) > 0
	var b strings.Builder
	switch {
	case got == wantLeak && got:
		b.WriteString("got through, as it should here:\n")
	case got == wantLeak:
		if os.Getenv("SPARROW_ESCAPE_VERBOSE") == "" {
			return
		}
		b.WriteString("held:\n")
	case wantLeak:
		b.WriteString("the attack got nowhere against the local backend, so it proves nothing about local-hardened; make it real\n")
	case a.sanity():
		b.WriteString("ordinary work failed under the sandbox:\n")
	default:
		b.WriteString("ESCAPE: the attack got through:\n")
	}
	for _, v := range o.violations {
		b.WriteString("  - " + v + "\n")
	}
	fmt.Fprintf(&b, "flags: %q\nscript:\n%s\n", o.flags, indent(o.script))
	if r := o.res; r != nil {
		fmt.Fprintf(&b, "exit %d after %s (stdout %d bytes)\nstdout:\n%s\nstderr:\n%s", r.code, r.elapsed.Round(time.Millisecond), r.outBytes,
			indent(clip(r.stdout)), indent(clip(r.stderr)))
	}
	if got == wantLeak {
		t.Log(b.String())
		return
	}
	t.Error(b.String())
}

func indent(s string) string {
	if s == "" {
		return "    (empty)"
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

func clip(s string) string {
	if len(s) > 4000 {
		return s[:4000] + fmt.Sprintf("\n… (%d more bytes)", len(s)-4000)
	}
	return s
}

// tally counts outcomes per class and identity for the summary that
// docs/SECURITY.md quotes.
type tally struct {
	mu     sync.Mutex
	counts map[string]map[string][2]int // class → runner → {held, ran}
}

// add counts one run of class as who; ok is whether it went as wanted.
func (t *tally) add(class, who string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[string]map[string][2]int{}
	}
	if t.counts[class] == nil {
		t.counts[class] = map[string][2]int{}
	}
	c := t.counts[class][who]
	c[1]++
	if ok {
		c[0]++
	}
	t.counts[class][who] = c
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, class := range escapeClasses {
		if t.counts[class] == nil {
			continue
		}
		fmt.Fprintf(&b, "  %-12s", class)
		for _, who := range []string{"root", "user"} {
			if c, ok := t.counts[class][who]; ok {
				fmt.Fprintf(&b, "  %s %d/%d", who, c[0], c[1])
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestEscape runs every attack against local-hardened as each identity.
func TestEscape(t *testing.T) {
	e := newEscapeEnv(t)
	var runs []*run
	for _, a := range escapeAttacks() {
		for _, r := range e.runners {
			runs = append(runs, &run{name: a.class + "/" + a.name + "/" + r.name, backend: "local-hardened", a: a, r: r, idx: len(runs)})
		}
	}
	var sum tally
	start := time.Now()
	t.Cleanup(func() { t.Logf("escape summary, %s (held/ran):\n%s", time.Since(start).Round(time.Second), &sum) })
	e.runAll(t, runs, false, &sum)
}

// TestEscapeAttacksAreReal runs, as root, the attacks that get through the
// local backend (which isolates nothing) and requires that they do: each
// is a test that can fail.
func TestEscapeAttacksAreReal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the local backend shows these leaks only to root")
	}
	e := newEscapeEnv(t)
	var runs []*run
	for _, a := range escapeAttacks() {
		if a.local {
			runs = append(runs, &run{name: a.class + "/" + a.name, backend: "local", a: a, r: e.runners[0], idx: len(runs)})
		}
	}
	var sum tally
	t.Cleanup(func() { t.Logf("escape summary against local (got through/ran):\n%s", &sum) })
	e.runAll(t, runs, true, &sum)
}

// hostIPv4 is this machine's first non-loopback IPv4 address, or "".
func hostIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func copyFile(src, dst string, perm os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, perm)
}

// sortedKeys is m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
