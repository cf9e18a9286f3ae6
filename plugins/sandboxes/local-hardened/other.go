//go:build !linux

package localhardened

import "context"

// Off Linux the backend is unavailable (confine.Probe says why), so these
// never run a command; they exist so the plugin builds everywhere.

func scanDenied(string, []string) []deniedEntry { return nil }

type diskWatch struct{ limit int64 }

func watchDisk(context.Context, []string, int64, func()) *diskWatch { return nil }

func (*diskWatch) exceeded() bool { return false }
