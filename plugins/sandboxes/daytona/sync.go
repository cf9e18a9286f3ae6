package daytona

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// The workspace travels as tar archives copied with `daytona cp`: the
// CLI's exec forwards no stdin, and it returns the command's output as a
// JSON string (apps/daemon toolbox ExecuteResponse.result), which cannot
// carry a binary stream. Each command gets a staging directory holding its
// scripts, its stdin and the upload archive, copied up in one
// `daytona cp LOCAL_DIR ID:SCRATCH/N`.

// syncTimeout bounds each copy and each sync script.
const syncTimeout = 10 * time.Minute

// The first upload leaves a sentinel file beside the staging directory.
// Every later sync script and every command checks it first: a sandbox
// that lost its copy of the workspace must neither run a command on what
// is left nor have its empty workspace copied back, which would delete
// the host's files.
const lostToken = "SPARROW_WORKSPACE_LOST"

// errLost is reported when the sentinel is gone.
var errLost = errors.New("the sandbox no longer holds its copy of the workspace")

// synced is the sentinel's path in the sandbox.
func (s *session) synced() string { return s.scratch + ".synced" }

// guard is the sentinel check a sync script starts with.
func guard(s *session) string {
	return "[ -e " + wsync.Quote(s.synced()) + " ] || { echo " + lostToken + "; exit 3; }\n"
}

// lost forgets what was synced, so that the next command uploads the
// whole workspace again.
func (s *session) lost() { s.mirror = wsync.New(s.root, s.policy.DeniedPaths) }

// staging is one command's staged files, here and in the sandbox.
type staging struct {
	// local is the directory on this machine, remote its copy in the
	// sandbox (SCRATCH/N), name is N.
	local, remote, name string
	// mark is the command's exit marker.
	mark string
	// stdin is set when the command has input, staged as "stdin".
	stdin bool
	// plan is the push, nil when the host did not change.
	plan *wsync.Plan
	err  error
}

// stage reads the caller's stdin to its end, plans the push and writes
// both into a fresh local staging directory.
func (d *Daytona) stage(ctx context.Context, s *session, stdin io.Reader) (*staging, error) {
	var data []byte
	if stdin != nil {
		var err error
		if data, err = readAll(ctx, stdin); err != nil {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
	}
	plan, err := s.mirror.Plan()
	if err != nil {
		return nil, fmt.Errorf("upload the workspace: %w", err)
	}
	dir, err := os.MkdirTemp("", "sparrow-daytona-")
	if err != nil {
		return nil, fmt.Errorf("stage the command: %w", err)
	}
	s.n++
	name := strconv.Itoa(s.n)
	st := &staging{local: dir, remote: path.Join(s.scratch, name), name: name, mark: "__sparrow_exit_" + d.nonce() + "="}
	if len(data) > 0 {
		st.write("stdin", string(data))
		st.stdin = true
	}
	if !plan.Empty() {
		f, err := os.Create(filepath.Join(dir, "push.tar"))
		if err == nil {
			err = plan.WriteTar(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			st.remove()
			return nil, fmt.Errorf("upload the workspace: %w", err)
		}
		script := "exec <" + wsync.Quote(st.remotePath("push.tar")) + "\n" + plan.Script(s.cfg.Workdir) + "; touch " + wsync.Quote(s.synced()) + "\n"
		if !plan.Full {
			script = guard(s) + script
		}
		st.write("push.sh", script)
		st.plan = plan
	}
	return st, st.err
}

// write stores a staged file; the first failure is kept for upload.
func (st *staging) write(name, content string) {
	if err := os.WriteFile(filepath.Join(st.local, name), []byte(content), 0o600); err != nil && st.err == nil {
		st.err = fmt.Errorf("stage the command: %w", err)
	}
}

func (st *staging) remotePath(name string) string { return path.Join(st.remote, name) }

// stdinPath is where the command's input is in the sandbox, or "".
func (st *staging) stdinPath() string {
	if !st.stdin {
		return ""
	}
	return st.remotePath("stdin")
}

func (st *staging) remove() { _ = os.RemoveAll(st.local) }

// upload copies the staging directory into the sandbox.
func (d *Daytona) upload(ctx context.Context, s *session, st *staging) error {
	if st.err != nil {
		return st.err
	}
	if _, err := d.call(ctx, s.cfg, syncTimeout, "cp", st.local, s.id+":"+st.remote); err != nil {
		return fmt.Errorf("copy the command's files into the sandbox: %w", err)
	}
	return nil
}

// push applies what changed on the host since the last sync (everything
// the first time): file tools and rewind change the host between
// commands. Denied paths are never in the archive.
func (d *Daytona) push(ctx context.Context, s *session, st *staging) error {
	if st.plan == nil {
		return nil
	}
	out, err := d.call(ctx, s.cfg, syncTimeout, "exec", s.id, "--timeout", seconds(syncTimeout), "--", "sh", st.remotePath("push.sh"))
	if bytes.Contains(out, []byte(lostToken)) {
		s.lost()
		return fmt.Errorf("upload the workspace: %w; the command was not run, the next command uploads the workspace in full", errLost)
	}
	if err != nil {
		return fmt.Errorf("upload the workspace: %w", err)
	}
	st.plan.Done()
	return nil
}

// pullScript is pull.sh: it removes the staging directories of earlier
// commands, checks the sentinel and archives the sandbox's workspace into
// this command's staging directory.
func pullScript(s *session, st *staging) string {
	return fmt.Sprintf("cd %s && for f in *; do [ \"$f\" = %s ] || rm -rf \"./$f\"; done\n%s{ %s; } >%s\n",
		wsync.Quote(s.scratch), wsync.Quote(st.name), guard(s), wsync.PullScript(s.cfg.Workdir), wsync.Quote(st.remotePath("pull.tar")))
}

// pull copies the sandbox's workspace back: new and changed files are
// written, files deleted remotely are deleted locally. Denied paths,
// absolute names, names with "..", and symlinks pointing outside the
// workspace are never written.
func (d *Daytona) pull(ctx context.Context, s *session, st *staging) error {
	out, err := d.call(ctx, s.cfg, syncTimeout, "exec", s.id, "--timeout", seconds(syncTimeout), "--", "sh", st.remotePath("pull.sh"))
	if bytes.Contains(out, []byte(lostToken)) {
		s.lost()
		return fmt.Errorf("copy the workspace back: %w; nothing was copied back, the next command uploads the workspace in full", errLost)
	}
	if err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	dst := filepath.Join(st.local, "pull.tar")
	if _, err := d.call(ctx, s.cfg, syncTimeout, "cp", s.id+":"+st.remotePath("pull.tar"), dst); err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	f, err := os.Open(dst)
	if err != nil {
		return fmt.Errorf("copy the workspace back: daytona cp left no archive: %w", err)
	}
	defer f.Close()
	if _, err := s.mirror.Pull(f); err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	return nil
}

// readAll reads r to its end unless ctx ends first.
func readAll(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	c := make(chan result, 1)
	go func() { b, err := io.ReadAll(r); c <- result{b, err} }()
	select {
	case res := <-c:
		return res.b, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
