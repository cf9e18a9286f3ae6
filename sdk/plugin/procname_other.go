//go:build !linux

package plugin

func setProcessName(string) {}
