//go:build linux && !amd64 && !arm64

package confine

const (
	auditArch   = 0
	x32Bit      = 0
	seccompArch = false
)

var archDeniedSyscalls []uintptr
