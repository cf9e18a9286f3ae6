package modal

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// The workspace travels as a tar stream through the SDK helper: `put`
// writes it to a `tar -x` in the container through ContainerProcess.stdin,
// `get` reads a `tar -c` back. `modal container exec --no-pty` cannot carry
// it: its non-PTY path forwards no stdin and writes the command's stdout
// and stderr together (modal-labs/modal-client modal/cli/container.py,
// StreamType.STDOUT for both; PR #2626).

// push sends what changed on the host since the last sync (everything
// the first time) into the container: file tools and rewind change the
// host between commands.
func (m *Modal) push(ctx context.Context, s *session) error {
	p, err := s.mirror.Plan()
	if err != nil {
		return fmt.Errorf("upload the workspace: %w", err)
	}
	if p.Empty() {
		return nil
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(p.WriteTar(pw)) }()
	var errOut bytes.Buffer
	err = m.python(ctx, s.cfg, pr, io.Discard, &errOut, "put", s.sandboxID, p.Script(s.cfg.Workdir))
	_ = pr.Close()
	if err != nil {
		return fmt.Errorf("upload the workspace: %w", toolError(err, errOut.String(), s.cfg.Python))
	}
	p.Done()
	return nil
}

// pull copies the container's workspace back: new and changed files are
// written, files deleted remotely are deleted locally. Denied paths,
// absolute names, names with "..", and symlinks pointing outside the
// workspace are never written.
func (m *Modal) pull(ctx context.Context, s *session) error {
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		_, err := s.mirror.Pull(pr)
		_, _ = io.Copy(io.Discard, pr)
		errc <- err
	}()
	var errOut bytes.Buffer
	err := m.python(ctx, s.cfg, nil, pw, &errOut, "get", s.sandboxID, wsync.PullScript(s.cfg.Workdir))
	pw.Close()
	perr := <-errc
	if err != nil {
		return fmt.Errorf("copy the workspace back: %w", toolError(err, errOut.String(), s.cfg.Python))
	}
	if perr != nil {
		return fmt.Errorf("copy the workspace back: %w", perr)
	}
	return nil
}
