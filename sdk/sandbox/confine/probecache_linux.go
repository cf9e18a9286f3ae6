package confine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// bwrapAnswer is what ProbeCached keeps of a bubblewrap check.
type bwrapAnswer struct {
	Key     string `json:"key"`
	Version string `json:"version"`
	UserNS  bool   `json:"userns"`
}

// ProbeCached is Probe, keeping bubblewrap's answer in file between
// processes: the check starts bubblewrap twice (tens of milliseconds that
// every Sparrow start would otherwise pay before its first confined
// plugin). The answer is reused only for the same bubblewrap binary (path,
// size, modification time, inode), the same boot and the same user; only a
// working bubblewrap is remembered, and everything else (Landlock, seccomp,
// cgroups) is probed afresh. A sysctl changed since can still make a
// remembered answer wrong: Forget it when a confined start fails.
func ProbeCached(ctx context.Context, file string) Report {
	return probe(ctx, func(ctx context.Context, bwrap string) (string, bool, error) {
		key := bwrapKey(bwrap)
		var a bwrapAnswer
		if raw, err := os.ReadFile(file); err == nil && key != "" && json.Unmarshal(raw, &a) == nil && a.Key == key {
			return a.Version, a.UserNS, nil
		}
		version, userns, err := probeBwrap(ctx, bwrap)
		if err == nil && key != "" {
			raw, _ := json.Marshal(bwrapAnswer{Key: key, Version: version, UserNS: userns})
			_ = writeAtomic(file, raw)
		}
		return version, userns, err
	})
}

// Forget drops what ProbeCached kept in file.
func Forget(file string) { _ = os.Remove(file) }

// bwrapKey names a bubblewrap binary on this boot for this user, or "" when
// it cannot be told apart.
func bwrapKey(bwrap string) string {
	fi, err := os.Stat(bwrap)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	// A random id the kernel draws at each boot.
	boot, err := os.ReadFile(filepath.Join("/proc/sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d %d %d %s uid=%d", bwrap, fi.Size(), fi.ModTime().UnixNano(), st.Ino, st.Mode, strings.TrimSpace(string(boot)), os.Getuid())
}

// writeAtomic writes data to a temp file beside path and renames it.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
