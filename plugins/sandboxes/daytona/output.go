package daytona

import (
	"io"
)

// orDiscard is w, or a writer that discards when w is nil.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
