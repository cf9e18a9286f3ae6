//go:build !unix

package ssh

import (
	"io/fs"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

// ownedByMe cannot tell off Unix; the directory is the user's temp dir.
func ownedByMe(fs.FileInfo) bool { return true }
