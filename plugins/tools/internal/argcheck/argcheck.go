// Package argcheck checks the arguments of Sparrow's file tools, with errors
// worded for the model that sent them.
package argcheck

import "fmt"

// Int checks the optional integer argument name against [lo, hi],
// returning def when it is absent.
func Int(name string, v *int, def, lo, hi int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < lo || *v > hi {
		return 0, fmt.Errorf("%s must be %d to %d, got %d", name, lo, hi, *v)
	}
	return *v, nil
}
