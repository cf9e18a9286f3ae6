package ssh

import (
	"context"
	"fmt"
	"io"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// The workspace travels as tar streams on ssh's stdin and stdout, through
// the session's master: up before every command, back after it.

// push sends what changed on the host since the last sync (everything
// the first time) to the remote copy: file tools and rewind change the
// host between commands. The script runs with umask 0 so the remote tar,
// which applies the umask when not run as root, keeps each file's mode
// (the session directory itself is 0700, so that opens nothing up).
func (b *SSH) push(ctx context.Context, s *session) error {
	p, err := s.mirror.Plan()
	if err != nil {
		return fmt.Errorf("upload the workspace: %w", err)
	}
	if p.Empty() {
		return nil
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(p.WriteTar(pw)) }()
	err = b.remote(ctx, s, "umask 0; "+p.Script(s.ws), pr, io.Discard)
	_ = pr.Close() // ends WriteTar if ssh stopped reading
	if err != nil {
		return fmt.Errorf("upload the workspace: %w", err)
	}
	p.Done()
	return nil
}

// pull copies the remote workspace back: new and changed files are
// written, files deleted remotely are deleted here. Denied paths,
// absolute names, names with "..", and symlinks leading out of the
// workspace are never written (wsync.Mirror.Pull). It also removes the
// command's pid and status files, first, in the same round trip.
func (b *SSH) pull(ctx context.Context, s *session, tag string) error {
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		_, err := s.mirror.Pull(pr)
		_, _ = io.Copy(io.Discard, pr)
		errc <- err
	}()
	script := wsync.PullScript(s.ws)
	if tag != "" {
		p := s.ctl + "/" + tag
		script = "rm -f -- " + quote(p+".pid") + " " + quote(p+".status") + " " + quote(p+".stop") + "; " + script
	}
	err := b.remote(ctx, s, script, nil, pw)
	// The stream ends only once ssh succeeded: a stream cut between two
	// entries reads as a complete archive, and Pull would then delete
	// every file it did not see.
	if err != nil {
		pw.CloseWithError(err)
	} else {
		_ = pw.Close()
	}
	perr := <-errc
	if err != nil {
		return fmt.Errorf("copy the workspace back: %w", err)
	}
	if perr != nil {
		return fmt.Errorf("copy the workspace back: %w", perr)
	}
	return nil
}
