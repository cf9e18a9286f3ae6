package ssh

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// maxSocketPath is the longest control socket path that fits every Unix:
// sun_path holds 104 bytes on the BSDs and macOS (108 on Linux) with the
// terminating NUL.
const maxSocketPath = 103

// socketName is the length of a session's socket name; ssh also appends
// "." and 16 random characters while it creates the socket (mux.c).
const socketName, socketTemp = 16, 17

// controlDir is where the control sockets live: <stateDir>/ssh/cm when
// that is short enough for a socket path and needs no quoting, else a per-user directory in
// the system's temporary directory.
func controlDir(stateDir string) string {
	if stateDir != "" {
		d := filepath.Join(stateDir, "ssh", "cm")
		if plainPath(d) && len(d)+1+socketName+socketTemp <= maxSocketPath {
			return d
		}
	}
	return filepath.Join(os.TempDir(), "sparrow-ssh-"+strconv.Itoa(os.Getuid()))
}

// controlPath is a session's master socket: short, and private to it, so
// closing it never cuts off another session or another Sparrow.
func controlPath(dir, sessionID string) string {
	h := sha256.Sum256([]byte(sessionID))
	return filepath.Join(dir, hex.EncodeToString(h[:])[:socketName])
}

// privateDir creates dir (mode 0700) and checks it is a real directory
// that only this user can enter: a socket directory in a shared /tmp must
// not be someone else's.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	if !ownedByMe(fi) {
		return errors.New(dir + " belongs to another user")
	}
	return nil
}

// ensureKnownHosts creates the known_hosts file (and its directory) when
// missing, so ssh can record a key on first contact and the fix the
// refusals suggest (ssh-keyscan ... >> FILE) works as written.
func ensureKnownHosts(file string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}
