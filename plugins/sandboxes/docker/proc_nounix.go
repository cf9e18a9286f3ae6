//go:build !unix

package docker

import (
	"os"
	"syscall"
)

// procAttr adds nothing off Unix: a `docker run` whose plugin died still
// ends, because its stdin closes with the plugin, which ends the container.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the process p.
func killGroup(p *os.Process) {
	if p != nil {
		_ = p.Kill()
	}
}
