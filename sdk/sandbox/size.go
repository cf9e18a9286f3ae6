package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a byte count: plain bytes ("1048576") or a number with
// a binary unit, K, M, G or T, optionally spelled KiB, MiB, ... or KB,
// MB, ... ("512K", "1024M", "2GiB"); units are powers of 1024.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToUpper(strings.TrimSpace(t[len(num):]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "I")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
	sh, ok := shift[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n < 0 || (sh > 0 && n > (1<<62)>>sh) {
		return 0, fmt.Errorf("size %q: want bytes or a number with K, M, G or T, such as 512M", s)
	}
	return n << sh, nil
}
