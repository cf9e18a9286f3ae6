//go:build !linux && !darwin

package pluginstall

import "errors"

// exchange is unavailable here; replace falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
