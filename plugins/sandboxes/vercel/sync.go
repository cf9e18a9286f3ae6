package vercel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// The workspace travels as tar archives copied with `sandbox copy` (one
// file per call; src/commands/cp.ts): `sandbox exec` forwards no stdin,
// and it relays output as text, which cannot carry a binary stream.

// syncTimeout bounds each copy and each sync script.
const syncTimeout = 10 * time.Minute

// The first upload leaves a sentinel file in the sandbox. Every later sync
// script and every command checks it first: a sandbox restarts empty once
// its lifetime has run out (`sandbox exec` resumes a stopped sandbox, and
// one created --non-persistent keeps no files), and such a sandbox must
// neither run a command on what is left nor have its empty workspace
// copied back, which would delete the host's files.
const lostToken = "SPARROW_WORKSPACE_LOST"

// errLost is reported when the sentinel is gone.
var errLost = errors.New("the sandbox no longer holds its copy of the workspace (a sandbox restarts empty once its timeout has run out)")

// synced is the sentinel's path in the sandbox.
func (s *session) synced() string { return s.scratch + "-synced" }

// guard is the sentinel check a sync script starts with.
func guard(s *session) string {
	return "[ -e " + wsync.Quote(s.synced()) + " ] || { echo " + lostToken + "; exit 3; }; "
}

// lost forgets what was synced, so that the next upload is in full.
func (s *session) lost() { s.mirror = wsync.New(s.root, s.policy.DeniedPaths) }

// push sends what changed on the host since the last sync (everything
// the first time) into the sandbox: file tools and rewind change the host
// between commands. Denied paths are never in the archive. A sandbox that
// lost its copy gets the whole workspace again, and the caller is told.
//
//	sandbox copy LOCAL/push.tar NAME:SCRATCH-push.tar
//	sandbox exec --timeout 600s NAME -- sh -c '[GUARD] exec <SCRATCH-push.tar; rm -f SCRATCH-push.tar; SCRIPT; touch SCRATCH-synced'
func (v *Vercel) push(ctx context.Context, s *session, local string, notice io.Writer) error {
	err := v.pushOnce(ctx, s, local)
	if errors.Is(err, errLost) {
		s.lost()
		fmt.Fprintf(notice, "sparrow: vercel-sandbox: %v; uploading the whole workspace again\n", errLost)
		err = v.pushOnce(ctx, s, local)
	}
	if err != nil {
		return fmt.Errorf("upload the workspace: %w", err)
	}
	return nil
}

func (v *Vercel) pushOnce(ctx context.Context, s *session, local string) error {
	p, err := s.mirror.Plan()
	if err != nil {
		return err
	}
	if p.Empty() {
		return nil
	}
	src := filepath.Join(local, "push.tar")
	f, err := os.Create(src)
	if err == nil {
		err = p.WriteTar(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	dst := s.scratch + "-push.tar"
	if err := v.copy(ctx, s, src, s.name+":"+dst); err != nil {
		return err
	}
	q := wsync.Quote(dst)
	script := "exec <" + q + "; rm -f " + q + "; " + p.Script(s.cfg.Workdir) + "; touch " + wsync.Quote(s.synced())
	if !p.Full {
		script = guard(s) + script
	}
	out, err := v.script(ctx, s, script)
	if bytes.Contains(out, []byte(lostToken)) {
		return errLost
	}
	if err != nil {
		return err
	}
	p.Done()
	return nil
}

// stageStdin reads the caller's stdin to its end and, when there is any,
// copies it into the sandbox, returning the file the command reads ("-"
// for none); the wrapper removes it. `sandbox exec` forwards no stdin, so
// input cannot be interactive.
func (v *Vercel) stageStdin(ctx context.Context, s *session, local string, r io.Reader) (string, error) {
	if r == nil {
		return "-", nil
	}
	data, err := readAll(ctx, r)
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	if len(data) == 0 {
		return "-", nil
	}
	src := filepath.Join(local, "stdin")
	if err := os.WriteFile(src, data, 0o600); err != nil {
		return "", fmt.Errorf("stage stdin: %w", err)
	}
	dst := s.scratch + "-stdin"
	if err := v.copy(ctx, s, src, s.name+":"+dst); err != nil {
		return "", fmt.Errorf("copy stdin into the sandbox: %w", err)
	}
	return dst, nil
}

// pull copies the sandbox's workspace back: new and changed files are
// written, files deleted remotely are deleted locally. Denied paths,
// absolute names, names with "..", and symlinks pointing outside the
// workspace are never written.
//
//	sandbox exec --timeout 600s NAME -- sh -c 'GUARD { cd WORKDIR && tar -cf - .; } >SCRATCH-pull.tar'
//	sandbox copy NAME:SCRATCH-pull.tar LOCAL/pull.tar
func (v *Vercel) pull(ctx context.Context, s *session, local string) error {
	src := s.scratch + "-pull.tar"
	out, err := v.script(ctx, s, guard(s)+"{ "+wsync.PullScript(s.cfg.Workdir)+"; } >"+wsync.Quote(src))
	if bytes.Contains(out, []byte(lostToken)) {
		s.lost()
		return fmt.Errorf("copy the workspace back: %w; nothing was copied back, the next command uploads the workspace in full", errLost)
	}
	if err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	// Older CLIs insist that a local destination exists.
	dst := filepath.Join(local, "pull.tar")
	if err := os.WriteFile(dst, nil, 0o600); err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	if err := v.copy(ctx, s, s.name+":"+src, dst); err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	f, err := os.Open(dst)
	if err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() == 0 {
		return fmt.Errorf("copy the workspace back: sandbox copy left an empty archive at %s", dst)
	}
	if _, err := s.mirror.Pull(f); err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	return nil
}

// copy runs `sandbox copy SRC DST`.
func (v *Vercel) copy(ctx context.Context, s *session, src, dst string) error {
	args := append(append([]string{"copy"}, v.scopeArgs(s.cfg)...), src, dst)
	_, err := v.call(ctx, s.cfg, s.root, syncTimeout, args...)
	return err
}

// script runs a sync script with `sandbox exec NAME -- sh -c SCRIPT` and
// returns its stdout; the CLI exits with the script's status
// (src/commands/exec.ts).
func (v *Vercel) script(ctx context.Context, s *session, script string) ([]byte, error) {
	args := append(append([]string{"exec"}, v.scopeArgs(s.cfg)...), "--timeout", seconds(syncTimeout), s.name, "--", "sh", "-c", script)
	return v.call(ctx, s.cfg, s.root, syncTimeout, args...)
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
