package cli

import (
	"testing"
)

func TestSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "4096": 4096, "512K": 512 << 10, "1024M": 1 << 30, "2G": 2 << 30, "64KiB": 64 << 10} {
		var f sizeFlag
		if err := f.Set(in); err != nil || int64(f) != want {
			t.Errorf("--memory %s = %d, %v; want %d", in, f, err, want)
		}
	}
	for _, bad := range []string{"lots", "-1M", "1.5G", ""} {
		var f sizeFlag
		if err := f.Set(bad); err == nil {
			t.Errorf("--memory %q accepted as %d", bad, f)
		}
	}
}

func TestListFlag(t *testing.T) {
	var f listFlag
	for _, v := range []string{"A,B", " C ", "D"} {
		if err := f.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.String(); got != "A,B,C,D" {
		t.Errorf("list %q, want A,B,C,D", got)
	}
	for _, bad := range []string{"A,,B", "", "A=1"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
