package main

import (
	"os/exec"
	"testing"
)

// BenchmarkVersion measures `sparrow --version` wall time, exec included:
// what a user waits for on the cheapest verb.
func BenchmarkVersion(b *testing.B) {
	bin := buildSparrow(b)
	for b.Loop() {
		if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}
