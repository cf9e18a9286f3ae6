package ssh

import (
	"io"
	"reflect"
	"sync"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
)

// capped counts a command's stdout and stderr against one cap and drops
// what exceeds it, reporting success so the command is never stopped by
// the cap. Writes to one destination are serialised; when stdout and
// stderr are the same writer (callers often pass one for both) that
// serialises the two streams.
type capped struct {
	mu        sync.Mutex // guards left and truncated
	left      int64
	truncated bool
}

// writers returns the command's stdout and stderr ends (nil discards).
func (c *capped) writers(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	outLock, errLock := &sync.Mutex{}, &sync.Mutex{}
	if samePointer(stdout, stderr) {
		errLock = outLock
	}
	return c.to(proc.OrDiscard(stdout), outLock), c.to(proc.OrDiscard(stderr), errLock)
}

func (c *capped) to(dst io.Writer, lock *sync.Mutex) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		n := c.take(len(p))
		if n > 0 {
			lock.Lock()
			_, err := dst.Write(p[:n])
			lock.Unlock()
			if err != nil {
				return 0, err
			}
		}
		return len(p), nil
	})
}

// take reserves up to n bytes of the cap and returns how many were given.
func (c *capped) take(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := int(min(int64(n), c.left))
	if k < n {
		c.truncated = true
	}
	c.left -= int64(k)
	return k
}

// dropped reports whether output beyond the cap was dropped.
func (c *capped) dropped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.truncated
}

// samePointer reports whether a and b are the same pointer. Only pointers
// are compared: comparing other dynamic types can panic.
func samePointer(a, b io.Writer) bool {
	if a == nil || b == nil {
		return false
	}
	t := reflect.TypeOf(a)
	return t.Kind() == reflect.Pointer && t == reflect.TypeOf(b) && a == b
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
