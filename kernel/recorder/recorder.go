package recorder

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

// File and directory names under the state directory.
const (
	RunsDir     = "runs"
	InputsFile  = "inputs.json"
	EventsFile  = "events.jsonl"
	dirPerm     = 0o700
	filePerm    = 0o600
	runIDLayout = "20060102-150405"
)

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("recorder is closed")

// Inputs is what a run was asked to do and with what: inputs.json.
type Inputs struct {
	RunID     string `json:"run_id"`
	Task      string `json:"task"`
	Workspace string `json:"workspace"`
	Model     string `json:"model"`
	Provider  string `json:"provider"`
	Sandbox   string `json:"sandbox"`
	// RepoHEAD is the workspace's git HEAD when the run started, "" outside
	// git.
	RepoHEAD string `json:"repo_head,omitempty"`
	// StartCheckpoint is the checkpoint of the workspace as the run found
	// it, uncommitted and untracked files included; StartCommit is its
	// commit, in the workspace's repository or Sparrow's shadow one.
	StartCheckpoint string `json:"start_checkpoint,omitempty"`
	StartCommit     string `json:"start_commit,omitempty"`
	// Seed is the sampling seed sent to the model, where one is
	// configured (model "x" { seed = N }) and the provider takes it.
	Seed *int64 `json:"seed,omitempty"`
	// Config is a snapshot of the merged configuration with secrets
	// removed; the caller provides it already sanitised.
	Config         json.RawMessage `json:"config,omitempty"`
	SparrowVersion string          `json:"sparrow_version"`
	Started        time.Time       `json:"started"`
}

// Recorder appends one run's events to events.jsonl. It is safe for
// concurrent use; its Write method is meant to be the event bus's first
// synchronous subscriber.
type Recorder struct {
	dir string

	mu     sync.Mutex
	f      *os.File
	buf    bytes.Buffer
	err    error // the first failed write; later writes refuse
	closed bool
	prev   string // hash of the last line written
}

// NewRunID returns a new run id that sorts by start time (UTC, to the
// second) with a random suffix: "20261122-153012-a1b2c3".
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return now.UTC().Format(runIDLayout) + "-" + hex.EncodeToString(b[:])
}

// checkRunID rejects a run id that is empty or could name a path outside
// the runs directory.
func checkRunID(id string) error {
	if id == "" {
		return errors.New("empty run id")
	}
	if id[0] == '.' {
		return fmt.Errorf("invalid run id %q: starts with a dot", id)
	}
	for _, c := range id {
		ok := c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			return fmt.Errorf("invalid run id %q: only letters, digits, '.', '-' and '_' are allowed", id)
		}
	}
	return nil
}

// Create starts the recording of run in.RunID under stateDir: it makes
// <stateDir>/runs/<run-id>/ (0700; it must not exist yet), writes
// inputs.json atomically and opens events.jsonl for appending (0600). On
// failure nothing is left behind.
func Create(stateDir string, in Inputs) (*Recorder, error) {
	if err := checkRunID(in.RunID); err != nil {
		return nil, fmt.Errorf("record run: %w", err)
	}
	runs := filepath.Join(stateDir, RunsDir)
	if err := os.MkdirAll(runs, dirPerm); err != nil {
		return nil, fmt.Errorf("record run %s: %w", in.RunID, err)
	}
	dir := filepath.Join(runs, in.RunID)
	if err := os.Mkdir(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("record run %s: %w", in.RunID, err)
	}
	r, err := create(dir, in)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("record run %s: %w", in.RunID, err)
	}
	return r, nil
}

func create(dir string, in Inputs) (*Recorder, error) {
	if err := writeInputs(dir, in); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, EventsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, filePerm)
	if err != nil {
		return nil, err
	}
	return &Recorder{dir: dir, f: f}, nil
}

// writeInputs writes in as dir/inputs.json, replacing any previous file
// atomically: a reader sees the old file or the new one, never a part.
func writeInputs(dir string, in Inputs) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", InputsFile, err)
	}
	return writeFileAtomic(filepath.Join(dir, InputsFile), append(b, '\n'))
}

// writeFileAtomic writes data to a temporary file beside path, fsyncs it,
// renames it over path and fsyncs the directory. The temporary file is
// removed on every failure.
func writeFileAtomic(path string, data []byte) (err error) {
	dir, name := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(filePerm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable. It is best effort: some file
// systems cannot fsync a directory, and the rename itself has happened.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Dir is the run's directory.
func (r *Recorder) Dir() string { return r.dir }

// UpdateInputs replaces inputs.json atomically, for what is learned after
// the run started. The run id cannot change.
func (r *Recorder) UpdateInputs(in Inputs) error {
	if want := filepath.Base(r.dir); in.RunID != want {
		return fmt.Errorf("update inputs of run %s: run id %q does not match", want, in.RunID)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("update inputs of run %s: %w", in.RunID, ErrClosed)
	}
	return writeInputs(r.dir, in)
}

// Write appends e to events.jsonl as one line, written whole before Write
// returns, so a crash loses nothing already recorded; the file is fsynced
// after RunFinished. An event that does not encode is refused without
// touching the file. A failed write is returned and every later Write
// fails too, so that no line is ever appended after a torn one.
func (r *Recorder) Write(e event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return fmt.Errorf("record event %d (%s): %w", e.Seq, e.Type, ErrClosed)
	case r.err != nil:
		return fmt.Errorf("record event %d (%s): an earlier write failed: %w", e.Seq, e.Type, r.err)
	}
	r.buf.Reset()
	e.Prev = r.prev
	if err := event.Encode(&r.buf, e); err != nil {
		return fmt.Errorf("record event %d (%s): %w", e.Seq, e.Type, err)
	}
	if _, err := r.f.Write(r.buf.Bytes()); err != nil {
		r.err = err
		return fmt.Errorf("record event %d (%s): %w", e.Seq, e.Type, err)
	}
	r.prev = LineHash(bytes.TrimSuffix(r.buf.Bytes(), []byte("\n")))
	if e.Type == event.TypeRunFinished {
		if err := r.f.Sync(); err != nil {
			r.err = err
			return fmt.Errorf("record event %d (%s): sync %s: %w", e.Seq, e.Type, EventsFile, err)
		}
	}
	return nil
}

// Close fsyncs and closes events.jsonl. Later calls return nil; Write
// after Close returns ErrClosed.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	path := filepath.Join(r.dir, EventsFile)
	var errs []error
	if err := r.f.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("sync %s: %w", path, err))
	}
	if err := r.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close %s: %w", path, err))
	}
	return errors.Join(errs...)
}
