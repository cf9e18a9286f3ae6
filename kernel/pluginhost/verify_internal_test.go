package pluginhost

import (
	"os"
	"testing"
)

// BenchmarkVerifyEntry measures copying a plugin binary into sealed memory
// while hashing it, the part of a start that grows with binary size. Set
// SPARROW_BENCH_BINARY to measure a specific file; by default it is the
// test binary itself.
func BenchmarkVerifyEntry(b *testing.B) {
	path := os.Getenv("SPARROW_BENCH_BINARY")
	if path == "" {
		path, _ = os.Executable()
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		v, err := verifyEntry(path, "", "")
		if err != nil {
			b.Fatal(err)
		}
		v.Close()
	}
}
