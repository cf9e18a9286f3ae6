package confine

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000
	// seccompArch is true where the filter knows the syscall table.
	seccompArch = true
)

var archDeniedSyscalls = []uintptr{unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_SYSFS, unix.SYS_NFSSERVCTL}
