package proc

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"time"
)

// OutputDrain is how long output may still flow after the command's
// process group is gone. Only a process that left the group (setsid, a
// daemon) can hold the pipes open longer; it is not waited for.
const OutputDrain = time.Second

// output carries a command's stdout and stderr to the caller through real
// pipes, so the command's exit is seen at once even while leftovers hold
// them. Stdout and stderr count together against one cap. Writes to one
// destination are serialised; when stdout and stderr are the same writer
// (callers often pass one for both) that serialises the two streams, and
// otherwise they flow independently, so a caller blocked on one stream
// never stalls the other.
type output struct {
	mu      sync.Mutex // guards left and dropped
	left    int64
	dropped bool

	// childEnds go to the command and are closed in this process once it
	// has started; readEnds are drained by the copiers.
	childEnds []*os.File
	readEnds  []*os.File
	copiers   sync.WaitGroup
}

// newOutput creates the pipes and starts copying into stdout and stderr
// (nil discards). Everything the command writes to stderr also goes to
// tap (nil for none), cap or no cap, from one goroutine. The caller must
// call finish.
func newOutput(stdout, stderr, tap io.Writer, limit int64, backend string) (*output, error) {
	o := &output{left: limit}
	for range 2 {
		r, w, err := os.Pipe()
		if err != nil {
			o.closeAll()
			return nil, fmt.Errorf("%s: output pipe: %w", backend, err)
		}
		o.childEnds = append(o.childEnds, w)
		o.readEnds = append(o.readEnds, r)
	}
	outLock, errLock := &sync.Mutex{}, &sync.Mutex{}
	if samePointer(stdout, stderr) {
		errLock = outLock
	}
	o.copiers.Go(func() { _, _ = io.Copy(o.writer(OrDiscard(stdout), outLock), o.readEnds[0]) })
	errDst := o.writer(OrDiscard(stderr), errLock)
	if tap != nil {
		errDst = io.MultiWriter(tap, errDst)
	}
	o.copiers.Go(func() { _, _ = io.Copy(errDst, o.readEnds[1]) })
	return o, nil
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

// stdout and stderr are the command's ends.
func (o *output) stdout() *os.File { return o.childEnds[0] }
func (o *output) stderr() *os.File { return o.childEnds[1] }

// started closes this process's copies of the command's ends, so the pipes
// reach EOF when the command and its children are gone.
func (o *output) started() {
	for _, f := range o.childEnds {
		_ = f.Close()
	}
}

// finish waits for the copiers, cutting them off after OutputDrain, and
// reports whether it had to.
func (o *output) finish() (cut bool) {
	done := make(chan struct{})
	go func() { o.copiers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(OutputDrain):
		for _, r := range o.readEnds {
			_ = r.SetReadDeadline(time.Now())
		}
		<-done
		cut = true
	}
	o.closeAll()
	return cut
}

func (o *output) closeAll() {
	for _, f := range append(o.childEnds, o.readEnds...) {
		_ = f.Close()
	}
}

// truncated reports whether output beyond the cap was dropped.
func (o *output) truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dropped
}

// writer counts writes against the shared cap and drops what exceeds it,
// reporting success so the command is never stopped by the cap. lock
// serialises writes to dst. A failing destination ends the copy; the pipe
// then breaks for the command.
func (o *output) writer(dst io.Writer, lock *sync.Mutex) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		n := o.take(len(p))
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
func (o *output) take(n int) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := int(min(int64(n), o.left))
	if k < n {
		o.dropped = true
	}
	o.left -= int64(k)
	return k
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// OrDiscard is w, or a writer that discards when w is nil.
func OrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
