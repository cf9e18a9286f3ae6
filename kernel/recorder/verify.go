package recorder

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// LineHash is the chain hash of one events.jsonl line (without its
// newline): "sha256:<hex>".
func LineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Verification is what Verify found.
type Verification struct {
	Lines int
	// BadLine is the first line that breaks the chain, 0 when none does.
	BadLine int
	Problem string
}

// OK reports an intact record.
func (v Verification) OK() bool { return v.BadLine == 0 && v.Problem == "" }

// Verify checks a recording's hash chain: every line's prev must be the
// hash of the line before it (and empty for the first), and the record
// must end with RunFinished. An edited, inserted or removed line breaks
// the chain at or right after the change.
func Verify(stateDir, runID string) (Verification, error) {
	if err := checkRunID(runID); err != nil {
		return Verification{}, err
	}
	path := filepath.Join(stateDir, RunsDir, runID, EventsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return Verification{}, fmt.Errorf("verify run %s: %w", runID, err)
	}
	var v Verification
	prev, lastType := "", ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		v.Lines++
		line := sc.Bytes()
		var head struct {
			Prev string `json:"prev"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return Verification{Lines: v.Lines, BadLine: v.Lines, Problem: fmt.Sprintf("%s:%d is not an event: %v", path, v.Lines, err)}, nil
		}
		if head.Prev != prev {
			return Verification{Lines: v.Lines, BadLine: v.Lines,
				Problem: fmt.Sprintf("%s:%d does not follow the line before it: it, or the line before, was altered, inserted or removed", path, v.Lines)}, nil
		}
		prev, lastType = LineHash(line), head.Type
	}
	if err := sc.Err(); err != nil {
		return v, fmt.Errorf("verify run %s: %w", runID, err)
	}
	if lastType != "RunFinished" {
		v.Problem = fmt.Sprintf("%s does not end with RunFinished: the run was cut short or its last lines were removed", path)
	}
	return v, nil
}
