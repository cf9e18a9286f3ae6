package confine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside: they change the machine or the
// mount table, reach other processes' memory, the kernel's keyrings or
// its extension points, or let io_uring run operations the filter never
// sees. Numbers come from x/sys/unix for the build's architecture.
var deniedSyscalls = append([]uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_QUOTACTL,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX, unix.SYS_SYSLOG,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_VHANGUP,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
}, archDeniedSyscalls...)

// deniedIoctls fail with EPERM: TIOCSTI pushes keystrokes into a terminal's
// input (the user's shell, if the command ever holds its tty), TIOCLINUX
// reads and writes a virtual console.
var deniedIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const (
	bpfLdAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfRet    = unix.BPF_RET | unix.BPF_K
	retAllow  = unix.SECCOMP_RET_ALLOW
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	offNr     = 0
	offArch   = 4
	offArg1Lo = 16 + 8 // args[1], low 32 bits (little-endian)
)

// seccompProgram builds the filter: other architectures are killed (a
// 32-bit syscall table would bypass the list), each denied syscall and
// ioctl returns EPERM, everything else is allowed.
func seccompProgram() []unix.SockFilter {
	n, m := len(deniedSyscalls), len(deniedIoctls)
	var p []unix.SockFilter
	add := func(code uint16, jt, jf uint8, k uint32) {
		p = append(p, unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k})
	}
	add(bpfLdAbs, 0, 0, offArch)
	add(bpfJeq, 1, 0, auditArch)
	add(bpfRet, 0, 0, retKill)
	add(bpfLdAbs, 0, 0, offNr)
	if x32Bit != 0 {
		// x32 syscalls on x86_64 reuse numbers with this bit set.
		add(bpfJge, uint8(n+m+4), 0, x32Bit)
	}
	for i, nr := range deniedSyscalls {
		// Jump to the EPERM return at the very end.
		add(bpfJeq, uint8(n+m+3-i), 0, uint32(nr))
	}
	add(bpfJeq, 1, 0, unix.SYS_IOCTL)
	add(bpfRet, 0, 0, retAllow)
	add(bpfLdAbs, 0, 0, offArg1Lo)
	for i, req := range deniedIoctls {
		add(bpfJeq, uint8(m-i), 0, req)
	}
	add(bpfRet, 0, 0, retAllow)
	add(bpfRet, 0, 0, retEPERM)
	return p
}

// installSeccomp loads the filter on the calling thread; execve keeps it.
// no_new_privs must be set.
func installSeccomp() error {
	prog := seccompProgram()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp: install filter: %w", errno)
	}
	return nil
}
