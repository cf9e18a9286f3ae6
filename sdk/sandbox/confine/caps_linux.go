package confine

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Secure bits (linux/securebits.h): uid 0 gains no capabilities at
// execve or setuid, the thread cannot raise ambient ones, all locked.
const (
	secbitNoRoot              = 1 << 0
	secbitNoRootLocked        = 1 << 1
	secbitNoSetuidFixup       = 1 << 2
	secbitNoSetuidFixupLocked = 1 << 3
	secbitKeepCapsLocked      = 1 << 5
	secbitNoAmbientRaise      = 1 << 6
	secbitNoAmbientRaiseLock  = 1 << 7
)

// dropCapabilities leaves the calling thread, and whatever it starts,
// without capabilities for good. Root running bubblewrap gets every
// capability of the sandbox's user namespace; a session's commands must
// not have CAP_SYS_PTRACE there, or they could open the (non-dumpable)
// server's memory and descriptors. A thread that holds none has
// nothing to drop.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	if data[0].Permitted == 0 && data[1].Permitted == 0 && data[0].Effective == 0 && data[1].Effective == 0 {
		return nil
	}
	bits := secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoAmbientRaise | secbitNoAmbientRaiseLock
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("capabilities: secure bits: %w", err)
	}
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability
		}
		if err != nil {
			return fmt.Errorf("capabilities: drop %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("capabilities: clear ambient: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: clear: %w", err)
	}
	return nil
}
