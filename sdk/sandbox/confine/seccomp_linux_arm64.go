package confine

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
	// seccompArch is true where the filter knows the syscall table.
	seccompArch = true
)

var archDeniedSyscalls = []uintptr{unix.SYS_NFSSERVCTL}
