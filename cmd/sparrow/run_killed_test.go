package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/recorder"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// killedConv is the model's one batch: a write_file, then a shell call that
// changes, creates, deletes and chmods files and then sleeps, so that the
// run can be killed mid-batch.
const killedConv = `{"turns": [
  {"events": [{"tool_call": {"id": "c1", "name": "write_file", "arguments": {"path": "c.txt", "content": "rewritten by the model\n"}}},
              {"tool_call": {"id": "c2", "name": "shell", "arguments": {"command": "echo changed > a.txt; echo new > b.txt; rm sub/d.txt; chmod -x script.sh; mkdir -p gen/deep && echo out > gen/deep/out.txt; sleep 100; echo done"}}},
              {"stop": "tool_use"}]},
  {"events": [{"text": "done"}, {"stop": "end_turn"}]}
]}`

// TestKilledMidBatchRewinds SIGKILLs sparrow while a batch's shell call is
// still running: no cleanup runs, so there is no RunFinished and no
// end-of-run checkpoint. The checkpoint taken before the batch must still
// restore the workspace byte for byte (uncommitted, staged, untracked,
// ignored, deleted and executable files alike) without touching the user's
// HEAD, index or branches, and `runs list` / `runs verify` must say the run
// was cut short.
func TestKilledMidBatchRewinds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("checkpoints need git")
	}
	k := newKilledRun(t)
	before := k.capture()

	runID, tree := k.runUntilSleeping()
	k.kill(tree)
	k.checkRecording(runID)
	k.checkCheckpoints(runID)

	// The batch's own changes are news to rewind (the run never recorded
	// the batch's end), so without --force and a terminal it refuses and
	// changes nothing.
	killed := hashTree(t, k.ws)
	stdout, stderr, code := k.sparrow("rewind")
	if code != 1 || !strings.Contains(stderr, "These files changed since Sparrow last touched the workspace ("+runID+"-2)") ||
		!strings.Contains(stderr, "rerun with --force") {
		t.Errorf("rewind without --force: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if diff := diffTrees(killed, hashTree(t, k.ws)); diff != "" {
		t.Errorf("a refused rewind changed the workspace:\n%s", diff)
	}

	stdout, stderr, code = k.sparrow("rewind", "--force")
	if code != 0 {
		t.Fatalf("rewind --force: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := "Rewound to " + runID + "-2 (before write_file c.txt). 6 file(s) restored.\n" +
		"  M a.txt\n  A b.txt\n  M c.txt\n  A gen/deep/out.txt\n  M script.sh\n  D sub/d.txt\n" +
		"Changed your mind? `sparrow rewind rewind-1` puts it back.\n"
	if stdout != want {
		t.Errorf("rewind --force printed:\n%s\nwant:\n%s", stdout, want)
	}

	after := k.capture()
	if diff := diffTrees(before.files, after.files); diff != "" {
		t.Errorf("the workspace after rewind differs from before the run:\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(k.ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt, created by the killed batch, survived the rewind: %v", err)
	}
	if got := readFile(t, filepath.Join(k.ws, "a.txt")); got != "one\nuncommitted edit\n" {
		t.Errorf("a.txt after rewind = %q, want the uncommitted edit back", got)
	}
	for _, c := range []struct{ name, before, after string }{
		{".git/index (bytes)", before.index, after.index},
		{"HEAD", before.head, after.head},
		{"git status", before.status, after.status},
		{"git ls-files --stage", before.stage, after.stage},
		{"branches, tags, stash", before.refs, after.refs},
	} {
		if c.after != c.before {
			t.Errorf("%s changed; before:\n%s\nafter:\n%s", c.name, c.before, c.after)
		}
	}
}

// killedRun is the workspace, configuration and binaries of one run.
type killedRun struct {
	t                    *testing.T
	bin, home, ws, state string
	env                  []string
}

// newKilledRun builds sparrow and a git workspace with a commit and state
// the commit does not hold: an uncommitted edit, a staged new file, an
// untracked and an ignored one.
func newKilledRun(t *testing.T) *killedRun {
	home := t.TempDir()
	k := &killedRun{t: t, bin: buildSparrow(t), home: home, ws: filepath.Join(home, "ws"),
		state: filepath.Join(home, ".local", "state", "sparrow")}
	k.env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SPARROW_PLUGIN_PATH=" + builtPlugins(t)}
	writeFiles(t, k.ws, map[string]string{
		"a.txt":      "one\n",
		"c.txt":      "keep me\n",
		"sub/d.txt":  "deep\n",
		".gitignore": "*.log\n",
		"script.sh":  "#!/bin/sh\necho hi\n",
	})
	if err := os.Chmod(filepath.Join(k.ws, "script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	k.git("init", "-q")
	k.git("add", "-A")
	k.git("commit", "-qm", "init")
	writeFiles(t, k.ws, map[string]string{
		"a.txt":      "one\nuncommitted edit\n",
		"staged.txt": "staged, not committed\n",
		"notes.txt":  "untracked\n",
		"build.log":  "ignored\n",
	})
	k.git("add", "staged.txt")
	writeFiles(t, home, map[string]string{
		"conv.json": killedConv,
		".config/sparrow/sparrow.hcl": "model = \"replay\"\nprovider \"replay\" {\n  file = \"" +
			filepath.Join(home, "conv.json") + "\"\n}\n",
	})
	return k
}

// git runs git in the workspace. GIT_OPTIONAL_LOCKS=0 keeps `git status`
// from refreshing the index, so looking does not change what is compared.
func (k *killedRun) git(args ...string) string {
	k.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", k.ws, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Env = append(k.env, "GIT_CONFIG_NOSYSTEM=1", "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		k.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// sparrow runs a sparrow verb on the workspace to completion.
func (k *killedRun) sparrow(args ...string) (stdout, stderr string, code int) {
	k.t.Helper()
	cmd := exec.Command(k.bin, append([]string{"-C", k.ws}, args...)...)
	cmd.Env = k.env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			k.t.Fatalf("sparrow %v: %v", args, err)
		}
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// repoState is everything a rewind must leave as it found it.
type repoState struct {
	files                            map[string]string
	index, head, status, stage, refs string
}

func (k *killedRun) capture() repoState {
	return repoState{
		files:  hashTree(k.t, k.ws),
		index:  readFile(k.t, filepath.Join(k.ws, ".git", "index")),
		head:   k.git("rev-parse", "HEAD"),
		status: k.git("status", "--porcelain=v2", "--branch", "--untracked-files=all", "--ignored"),
		stage:  k.git("ls-files", "--stage"),
		refs:   k.git("for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
	}
}

// runUntilSleeping starts `sparrow run` and waits until the batch's shell
// call sleeps with all its changes on disk. It returns the run's id and
// the process tree below sparrow at that moment.
func (k *killedRun) runUntilSleeping() (string, []proc) {
	t := k.t
	// Files, not buffers: sparrow writes them while the test polls.
	stdout, err := os.Create(filepath.Join(k.home, "run.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(k.home, "run.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd := exec.Command(k.bin, "-C", k.ws, "run", "--json", "--autonomy", "trusted", "change things")
	cmd.Env = k.env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	var tree []proc
	t.Cleanup(func() {
		// Whatever outlived sparrow must not outlive the test.
		for _, p := range tree {
			if isAlive(p) {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	})
	runID := ""
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		tree = descendants(cmd.Process.Pid)
		if runs, _ := recorder.List(k.state); runID == "" && len(runs) == 1 {
			runID = runs[0].RunID
		}
		if runID != "" && hasComm(tree, "sleep") && callStarted(k.state, runID, "c2") && batchDone(k.ws) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell call never got to its sleep; tree %v\nstdout:\n%s\nstderr:\n%s",
				tree, readFile(t, stdout.Name()), readFile(t, stderr.Name()))
		}
	}
	for _, name := range []string{"sparrow-plugin-local-hardened", "sparrow-plugin-core", "sparrow-plugin-replay"} {
		if !hasArgv0(tree, name) {
			t.Errorf("no %s below sparrow; tree %v", name, tree)
		}
	}
	// SIGKILL: no signal handler, no deferred cleanup, no RunFinished.
	cmd.Process.Kill()
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("sparrow ended with %v, want killed by SIGKILL", cmd.ProcessState)
	}
	return runID, tree
}

// kill checks what of tree outlived sparrow and kills it, so nothing the
// killed run started writes to the workspace while it is rewound.
func (k *killedRun) kill(tree []proc) {
	t := k.t
	// Plugins have a parent-death signal; give the kernel a moment.
	alive := waitGone(tree, 5*time.Second)
	// The shell's own children (the sleep) die too: the local sandbox
	// kills every live command group when the kernel dies.
	for _, p := range alive {
		switch {
		case strings.HasPrefix(filepath.Base(p.argv0), "sparrow-plugin-"):
			t.Errorf("plugin %v outlived the SIGKILLed sparrow", p)
		case p.comm == "sh":
			t.Errorf("the shell call's /bin/sh %v outlived the SIGKILLed sparrow", p)
		case p.comm == "sleep":
			t.Errorf("%v, started by the shell call, outlived the SIGKILLed sparrow", p)
		default:
			t.Errorf("%v outlived the SIGKILLed sparrow", p)
		}
		syscall.Kill(p.pid, syscall.SIGKILL)
	}
	if left := waitGone(alive, 5*time.Second); len(left) > 0 {
		t.Fatalf("leftovers of the killed run would not die: %v", left)
	}
}

// checkRecording checks the killed run's recording and how `runs list`
// and `runs verify` report it.
func (k *killedRun) checkRecording(runID string) {
	t := k.t
	rec, err := recorder.Open(k.state, runID)
	if err != nil {
		t.Fatalf("open the killed run's recording: %v", err)
	}
	if rec.Truncated {
		t.Errorf("the recording's last line is torn")
	}
	if last := rec.Events[len(rec.Events)-1]; last.Type == event.TypeRunFinished {
		t.Errorf("a SIGKILLed run recorded RunFinished: %+v", last.Payload)
	}
	stdout, stderr, code := k.sparrow("runs", "list")
	row := `(?m)^` + regexp.QuoteMeta(runID) + ` .* unfinished +replay +0 +\$0\.0000 +change things$`
	if code != 0 || !regexp.MustCompile(row).MatchString(stdout) {
		t.Errorf("runs list: exit %d, want the run listed as unfinished:\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = k.sparrow("runs", "list", "--json")
	var listed struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(stdout), &listed); code != 0 || err != nil || listed.RunID != runID || listed.Status != "unfinished" {
		t.Errorf("runs list --json: exit %d, %v, %+v:\n%s%s", code, err, listed, stdout, stderr)
	}
	// Verify will not call the record complete and says why, without
	// taking the cut for tampering.
	stdout, stderr, code = k.sparrow("runs", "verify", runID)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "does not end with RunFinished: the run was cut short") ||
		strings.Contains(stderr, "altered") {
		t.Errorf("runs verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// checkCheckpoints checks that the run left its start-of-run checkpoint
// and the one before the batch, and no end-of-run checkpoint.
func (k *killedRun) checkCheckpoints(runID string) {
	t := k.t
	stdout, stderr, code := k.sparrow("checkpoint", "list")
	if code != 0 {
		t.Fatalf("checkpoint list: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		`(?m)^ID +TIME +TURN +TOOL +CHANGED AFTER +SUMMARY$`,
		`(?m)^` + regexp.QuoteMeta(runID) + `-2 .* 1 +write_file +- +before write_file c\.txt$`,
		`(?m)^` + regexp.QuoteMeta(runID) + `-1 .* 0 +- +0 files \+0 −0 +start of run$`,
	} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("checkpoint list: want %s in:\n%s", want, stdout)
		}
	}
	if strings.Count(stdout, "\n") != 3 {
		t.Errorf("checkpoint list: want a header and two checkpoints:\n%s", stdout)
	}
}

// callStarted reports whether run runID recorded ToolUseStarted for callID.
func callStarted(state, runID, callID string) bool {
	rec, err := recorder.Open(state, runID)
	if err != nil {
		return false
	}
	for _, e := range rec.Events {
		if s, ok := e.Payload.(*event.ToolUseStarted); ok && s.CallID == callID {
			return true
		}
	}
	return false
}

// batchDone reports whether killedConv's batch has made all its changes.
func batchDone(ws string) bool {
	c, _ := os.ReadFile(filepath.Join(ws, "c.txt"))
	out, _ := os.ReadFile(filepath.Join(ws, "gen", "deep", "out.txt"))
	fi, err := os.Stat(filepath.Join(ws, "script.sh"))
	return string(c) == "rewritten by the model\n" && string(out) == "out\n" && err == nil && fi.Mode()&0o111 == 0
}

// waitGone waits up to d for every process of ps to end and returns those
// still alive.
func waitGone(ps []proc, d time.Duration) []proc {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		var alive []proc
		for _, p := range ps {
			if isAlive(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
	}
}

// hashTree maps every path below root, .git aside, to its type, mode and
// content hash (or link target).
func hashTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && rel == ".git" {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			desc += " " + hex.EncodeToString(sum[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		out[filepath.ToSlash(rel)] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffTrees lists the paths hashTree saw differently, one a line.
func diffTrees(before, after map[string]string) string {
	var lines []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			lines = append(lines, fmt.Sprintf("gone:    %s (%s)", p, b))
		} else if a != b {
			lines = append(lines, fmt.Sprintf("changed: %s (%s, now %s)", p, b, a))
		}
	}
	for p, a := range after {
		if _, ok := before[p]; !ok {
			lines = append(lines, fmt.Sprintf("new:     %s (%s)", p, a))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}
