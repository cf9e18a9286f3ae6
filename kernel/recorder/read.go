package recorder

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

// Run is a recorded run as read back from disk.
type Run struct {
	// Dir is the run's directory.
	Dir    string
	Inputs Inputs
	// Events are the complete events of events.jsonl, in file order.
	Events []event.Event
	// Truncated says the last line of events.jsonl was cut short (a crash
	// mid-write) and was left out.
	Truncated bool
}

// Open reads run runID from stateDir: inputs.json and every event of
// events.jsonl. A truncated last line is tolerated: Open returns every
// complete event before it and sets Run.Truncated. A malformed line
// anywhere else is an error naming the file and line ("…/events.jsonl:7:
// …"); the Run returned with it holds the events before that line.
func Open(stateDir, runID string) (*Run, error) {
	if err := checkRunID(runID); err != nil {
		return nil, fmt.Errorf("open run: %w", err)
	}
	dir := filepath.Join(stateDir, RunsDir, runID)
	in, err := readInputs(dir)
	if err != nil {
		return nil, fmt.Errorf("open run %s: %w", runID, err)
	}
	path := filepath.Join(dir, EventsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open run %s: %w", runID, err)
	}
	defer f.Close()
	events, err := event.Decode(f)
	run := &Run{Dir: dir, Inputs: in, Events: events}
	if err == nil {
		return run, nil
	}
	var le *event.LineError
	switch {
	case errors.Is(err, event.ErrTruncated):
		run.Truncated = true
		return run, nil
	case errors.As(err, &le):
		return run, fmt.Errorf("open run %s: %s:%d: %w", runID, path, le.Line, le.Err)
	default:
		return run, fmt.Errorf("open run %s: read %s: %w", runID, path, err)
	}
}

// List returns the inputs of every run recorded under stateDir, newest
// first. A directory without inputs.json is not a run and is skipped; a
// run whose inputs.json cannot be read is reported in the error, joined
// with the others, while the readable runs are still returned.
func List(stateDir string) ([]Inputs, error) {
	runs := filepath.Join(stateDir, RunsDir)
	entries, err := os.ReadDir(runs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var (
		out  []Inputs
		errs []error
	)
	for _, e := range entries {
		if !e.IsDir() || checkRunID(e.Name()) != nil {
			continue
		}
		in, err := readInputs(filepath.Join(runs, e.Name()))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("list runs: %w", err))
			continue
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Inputs) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return cmp.Compare(b.RunID, a.RunID)
	})
	return out, errors.Join(errs...)
}

// readInputs reads dir/inputs.json. A run id missing from the file is
// taken from the directory name.
func readInputs(dir string) (Inputs, error) {
	path := filepath.Join(dir, InputsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return Inputs{}, err
	}
	var in Inputs
	if err := json.Unmarshal(b, &in); err != nil {
		return Inputs{}, fmt.Errorf("%s: %w", path, err)
	}
	if in.RunID == "" {
		in.RunID = filepath.Base(dir)
	}
	return in, nil
}
