package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Checkpoint defaults.
const (
	DefaultCheckpointRetention = 30 * 24 * time.Hour
	DefaultMaxFileMB           = 16
)

// Checkpoints tune workspace snapshots.
type Checkpoints struct {
	// Retention is how long checkpoints are kept; older ones are pruned
	// when a run ends. Zero keeps them all.
	Retention time.Duration
	// MaxFileMB is the size above which a file is left out of snapshots
	// (with a notice); 0 means no cap.
	MaxFileMB int
	// RollbackFailed rolls a batch whose call failed back to its
	// checkpoint.
	RollbackFailed bool
}

type checkpointsBlock struct {
	retention      val[time.Duration]
	maxFileMB      val[int]
	rollbackFailed val[bool]
}

func decodeCheckpoints(d *decoder, b *hcl.Block) *checkpointsBlock {
	a := d.content(b, "checkpoints").Attributes
	cb := &checkpointsBlock{
		maxFileMB:      d.integer(a, "max_file_mb", 0, 1<<20, " Use 0 for no cap."),
		rollbackFailed: d.boolean(a, "rollback_failed"),
	}
	if s := d.str(a, "retention"); s.Set {
		dur, err := ParseAge(s.V)
		if err != nil {
			d.errorf(a["retention"].Expr.Range(), "Invalid duration", "%v", err)
		} else {
			cb.retention = val[time.Duration]{V: dur, Set: true, Range: s.Range}
		}
	}
	return cb
}

// applyCheckpoints merges a checkpoints block. An untrusted project may
// keep more but not throw undo history away sooner, nor turn rollback off.
func (m *merger) applyCheckpoints(b *checkpointsBlock) {
	cp := &m.cfg.Checkpoints
	if b.retention.Set && (cp.Retention == 0 || (b.retention.V != 0 && b.retention.V >= cp.Retention) || m.allowed(b.retention.Range,
		"checkpoints.retention", fmt.Sprintf("prunes checkpoints sooner than %s", FormatAge(cp.Retention)))) {
		set(m, "checkpoints.retention", &cp.Retention, b.retention)
	}
	set(m, "checkpoints.max_file_mb", &cp.MaxFileMB, b.maxFileMB)
	if b.rollbackFailed.Set && (b.rollbackFailed.V || m.allowed(b.rollbackFailed.Range,
		"checkpoints.rollback_failed = false", "keeps the changes of failed batches")) {
		set(m, "checkpoints.rollback_failed", &cp.RollbackFailed, b.rollbackFailed)
	}
}

func (c *Config) showCheckpoints() *showBlock {
	b := &showBlock{header: "checkpoints"}
	b.attr("retention", FormatAge(c.Checkpoints.Retention), c.origin("checkpoints.retention"))
	b.attr("max_file_mb", c.Checkpoints.MaxFileMB, c.origin("checkpoints.max_file_mb"))
	b.attr("rollback_failed", c.Checkpoints.RollbackFailed, c.origin("checkpoints.rollback_failed"))
	return b
}

// ParseAge parses a duration as Go writes them ("90m", "36h") or a whole
// number of days ("30d"); "0" means forever.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a duration; write something like \"30d\", \"12h\" or \"90m\"", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration; write something like \"30d\", \"12h\" or \"90m\"", s)
	}
	return d, nil
}

// FormatAge writes a duration the way ParseAge reads it, in days when it
// is a whole number of them.
func FormatAge(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "0"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	default:
		return d.String()
	}
}
