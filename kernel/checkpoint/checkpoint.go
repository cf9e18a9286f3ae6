package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RefPrefix is where checkpoints live.
const RefPrefix = "refs/sparrow/checkpoints/"

// Meta describes why a checkpoint was taken.
type Meta struct {
	RunID   string `json:"run"`
	Turn    int    `json:"turn"`
	Tool    string `json:"tool"`
	Summary string `json:"summary"`
	// Skipped are files left out of the snapshot for being larger than
	// the store's cap; a rewind leaves them as they are.
	Skipped []string `json:"skipped,omitempty"`
}

// DefaultMaxFileSize is the size above which a file is not snapshotted.
const DefaultMaxFileSize = 16 << 20

// Options tune a store; the zero value takes the defaults.
type Options struct {
	// MaxFileSize is the largest file a snapshot holds, in bytes: 0 means
	// DefaultMaxFileSize, a negative value no cap. Larger files are
	// skipped and named in Meta.Skipped, never silently.
	MaxFileSize int64
}

// Checkpoint is one snapshot.
type Checkpoint struct {
	// ID is "<run>-<n>", also the ref's last element.
	ID     string
	Ref    string
	Commit string
	Tree   string
	Time   time.Time
	Meta   Meta
}

// Store snapshots and restores one workspace.
type Store struct {
	ws      string
	gitDir  string
	index   string
	shadow  bool
	maxSize int64

	mu   sync.Mutex
	last map[string]lastCheckpoint // run id → its newest checkpoint
}

type lastCheckpoint struct {
	n      int
	commit string
}

// Open prepares a store for workspace, keeping its private index (and the
// shadow repository, for a non-git workspace) under stateDir.
func Open(ctx context.Context, workspace, stateDir string, o Options) (*Store, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("checkpoints need git, which is not installed (Debian: apt-get install git)")
	}
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	sum := sha256.Sum256([]byte(ws))
	dir := filepath.Join(stateDir, "checkpoints", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint state: %w", err)
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	s := &Store{ws: ws, index: filepath.Join(dir, "index"), maxSize: o.MaxFileSize, last: map[string]lastCheckpoint{}}
	// One git start for both answers: each costs milliseconds at every
	// run's start.
	out, err := exec.CommandContext(ctx, "git", "-C", ws, "rev-parse", "--absolute-git-dir", "--show-toplevel").Output()
	if dir, top, ok := strings.Cut(strings.TrimSpace(string(out)), "\n"); err == nil && ok && filepath.Clean(top) == ws {
		s.gitDir = dir
		return s, nil
	}
	// Not the top of a git repository: a shadow repository of our own.
	s.shadow, s.gitDir = true, filepath.Join(dir, "shadow.git")
	if _, err := os.Stat(s.gitDir); errors.Is(err, os.ErrNotExist) {
		if out, err := exec.CommandContext(ctx, "git", "init", "-q", "--bare", s.gitDir).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("create shadow repository: %v: %s", err, out)
		}
	}
	return s, nil
}

// Shadow reports whether the workspace is not a git repository.
func (s *Store) Shadow() bool { return s.shadow }

// git runs git against the workspace with the private index.
func (s *Store) git(ctx context.Context, stdin []byte, args ...string) (string, error) {
	return s.gitIndex(ctx, s.index, stdin, args...)
}

// gitIndex runs git against the workspace with the given index file.
func (s *Store) gitIndex(ctx context.Context, index string, stdin []byte, args ...string) (string, error) {
	// The untracked cache spares re-scanning unchanged directories.
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.untrackedCache=true", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = s.ws
	cmd.Env = append(os.Environ(),
		"GIT_DIR="+s.gitDir, "GIT_WORK_TREE="+s.ws, "GIT_INDEX_FILE="+index,
		"GIT_AUTHOR_NAME=sparrow", "GIT_AUTHOR_EMAIL=sparrow@localhost",
		"GIT_COMMITTER_NAME=sparrow", "GIT_COMMITTER_EMAIL=sparrow@localhost",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	// Only the final newline goes: -z output may hold names that begin or
	// end with spaces.
	return strings.TrimRight(string(out), "\n"), nil
}

// Create snapshots the workspace: tracked and untracked files, .gitignore
// respected. The private index keeps git's stat cache, so unchanged files
// are not re-read. It is Snapshot then Commit.
func (s *Store) Create(ctx context.Context, m Meta) (Checkpoint, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	return s.Commit(ctx, snap, m)
}

// Snapshot is the workspace's state written into the store as a tree, not
// yet a checkpoint: nothing lists it until Commit records it.
type Snapshot struct {
	tree    string
	skipped []string
}

// Snapshot writes the workspace's state as it is now, as Create would,
// without recording a checkpoint. Taking it ahead (while other work
// runs) and committing it later keeps the checkpoint to the state of
// that moment; one never committed leaves only unreferenced objects.
func (s *Store) Snapshot(ctx context.Context) (Snapshot, error) {
	tree, skipped, err := s.snapshotTree(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("checkpoint: %w", err)
	}
	return Snapshot{tree: tree, skipped: skipped}, nil
}

// Commit records snap as the run's next checkpoint.
func (s *Store) Commit(ctx context.Context, snap Snapshot, m Meta) (Checkpoint, error) {
	if snap.tree == "" {
		return Checkpoint{}, errors.New("checkpoint: commit of an empty snapshot")
	}
	tree := snap.tree
	m.Skipped = snap.skipped
	n, parent, err := s.next(ctx, m.RunID)
	if err != nil {
		return Checkpoint{}, err
	}
	meta, _ := json.Marshal(m)
	msg := fmt.Sprintf("sparrow checkpoint %s-%d: %s\n\n%s\n", m.RunID, n, m.Summary, meta)
	args := []string{"commit-tree", tree}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	commit, err := s.git(ctx, []byte(msg), args...)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	id := fmt.Sprintf("%s-%d", m.RunID, n)
	ref := RefPrefix + id
	// The empty old value makes git refuse a ref that exists: a
	// checkpoint is never overwritten.
	if _, err := s.git(ctx, nil, "update-ref", ref, commit, ""); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	s.mu.Lock()
	s.last[m.RunID] = lastCheckpoint{n, commit}
	s.mu.Unlock()
	return Checkpoint{ID: id, Ref: ref, Commit: commit, Tree: tree, Time: time.Now(), Meta: m}, nil
}

// NewRun tells the store that runID has no checkpoints yet (a run that
// has just begun, with a fresh id), so its first is numbered without
// listing every checkpoint. Were it wrong, that checkpoint would fail,
// not overwrite one.
func (s *Store) NewRun(runID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.last[runID]; !ok {
		s.last[runID] = lastCheckpoint{}
	}
}

// next is the number of the run's next checkpoint and its latest commit;
// refs are scanned once per run per Store, then counted in memory.
func (s *Store) next(ctx context.Context, runID string) (int, string, error) {
	s.mu.Lock()
	l, ok := s.last[runID]
	s.mu.Unlock()
	if ok {
		return l.n + 1, l.commit, nil
	}
	all, err := s.List(ctx)
	if err != nil {
		return 0, "", err
	}
	n, parent := 1, ""
	for _, c := range all {
		if c.Meta.RunID == runID {
			if k := seq(c.ID); k >= n {
				n, parent = k+1, c.Commit
			}
		}
	}
	return n, parent, nil
}

func seq(id string) int {
	i := strings.LastIndexByte(id, '-')
	n, _ := strconv.Atoi(id[i+1:])
	return n
}

// List returns every checkpoint, newest first.
func (s *Store) List(ctx context.Context) ([]Checkpoint, error) {
	out, err := s.git(ctx, nil, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(tree)%00%(creatordate:unix)%00%(contents:body)%00%00", RefPrefix)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	var cps []Checkpoint
	for _, rec := range strings.Split(out, "\x00\x00") {
		f := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x00", 5)
		if len(f) < 5 {
			continue
		}
		secs, _ := strconv.ParseInt(f[3], 10, 64)
		c := Checkpoint{Ref: f[0], ID: strings.TrimPrefix(f[0], RefPrefix), Commit: f[1], Tree: f[2], Time: time.Unix(secs, 0)}
		_ = json.Unmarshal([]byte(strings.TrimSpace(f[4])), &c.Meta)
		cps = append(cps, c)
	}
	sort.SliceStable(cps, func(i, j int) bool {
		if !cps[i].Time.Equal(cps[j].Time) {
			return cps[i].Time.After(cps[j].Time)
		}
		if cps[i].Meta.RunID != cps[j].Meta.RunID {
			return cps[i].Meta.RunID > cps[j].Meta.RunID
		}
		return seq(cps[i].ID) > seq(cps[j].ID)
	})
	return cps, nil
}

// Find returns the checkpoint with id, or the checkpoint before the Nth
// newest batch for "N" (1, the default, is before the last batch).
func (s *Store) Find(ctx context.Context, idOrN string) (Checkpoint, error) {
	all, err := s.List(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	if len(all) == 0 {
		return Checkpoint{}, errors.New("this workspace has no checkpoints")
	}
	if idOrN == "" {
		idOrN = "1"
	}
	if n, err := strconv.Atoi(idOrN); err == nil {
		// Counting goes by batches: snapshots taken at the end of a run or
		// before a rewind are not steps back.
		var batches []Checkpoint
		for _, c := range all {
			if c.Meta.Tool != "" {
				batches = append(batches, c)
			}
		}
		if n < 1 || n > len(batches) {
			return Checkpoint{}, fmt.Errorf("there are %d batch checkpoints; %d is out of range", len(batches), n)
		}
		return batches[n-1], nil
	}
	for _, c := range all {
		if c.ID == idOrN {
			return c, nil
		}
	}
	return Checkpoint{}, fmt.Errorf("no checkpoint %q (see `sparrow checkpoint list`)", idOrN)
}
