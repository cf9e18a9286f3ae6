package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// sizeFlag is a flag holding a byte count: plain bytes or a number with
// K, M, G or T, the same sizes config takes (sandbox.ParseSize).
type sizeFlag int64

func (f *sizeFlag) String() string { return strconv.FormatInt(int64(*f), 10) }
func (f *sizeFlag) Set(s string) error {
	n, err := sandbox.ParseSize(s)
	if err != nil {
		return err
	}
	*f = sizeFlag(n)
	return nil
}

// countFlag is a flag holding a count that cannot be negative.
type countFlag int64

func (f *countFlag) String() string { return strconv.FormatInt(int64(*f), 10) }
func (f *countFlag) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	switch {
	case err != nil:
		return errors.New("want a whole number")
	case n < 0:
		return errors.New("must not be negative")
	}
	*f = countFlag(n)
	return nil
}

// listFlag is a repeatable flag whose values may also be comma lists:
// --env-allow A,B --env-allow C is A, B, C.
type listFlag []string

func (f *listFlag) String() string { return strings.Join(*f, ",") }
func (f *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" || strings.ContainsAny(v, "=\x00") {
			return fmt.Errorf("%q: want names separated by commas, without '=' or empty names", s)
		}
		*f = append(*f, v)
	}
	return nil
}

// networkFlag is --network allow|deny; set tells an explicit deny from
// the default.
type networkFlag struct {
	allow, set bool
}

func (f *networkFlag) String() string {
	if f == nil || !f.allow {
		return "deny"
	}
	return "allow"
}

func (f *networkFlag) Set(s string) error {
	switch s {
	case "allow":
		f.allow = true
	case "deny":
		f.allow = false
	default:
		return fmt.Errorf("%q: want allow or deny", s)
	}
	f.set = true
	return nil
}
