package wasmtool

import (
	"bytes"
	"context"
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// pageSize is the size of a WebAssembly memory page.
const pageSize = 64 << 10

// cappedWriter keeps at most max bytes. The first write past the cap
// stores nothing more, marks the overflow, calls onOverflow (which stops
// the guest) and fails, as do all later writes, so a runaway guest cannot
// grow host memory.
type cappedWriter struct {
	mu         sync.Mutex
	max        int
	buf        bytes.Buffer
	overflow   bool
	onOverflow func()
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.overflow {
		return 0, errOutputFull
	}
	if w.buf.Len()+len(p) > w.max {
		w.overflow = true
		if w.onOverflow != nil {
			w.onOverflow()
		}
		return 0, errOutputFull
	}
	return w.buf.Write(p)
}

type outputFullError struct{}

func (outputFullError) Error() string { return "output limit reached" }

var errOutputFull error = outputFullError{}

// tailWriter keeps the last max bytes written to it and never fails.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if len(p) >= w.max {
		w.buf = append(w.buf[:0], p[len(p)-w.max:]...)
		return n, nil
	}
	if over := len(w.buf) + len(p) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	w.buf = append(w.buf, p...)
	return n, nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// limitedMemory backs one instance's linear memory and refuses to grow it
// past maxBytes, remembering that it did: memory.grow then returns -1 to
// the guest, which typically dies of it, and the call reports the limit
// rather than the guest's last words.
type limitedMemory struct {
	mu       sync.Mutex
	maxBytes uint64
	buf      []byte
	refused  bool
}

func withAllocator(ctx context.Context, m *limitedMemory) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(
		func(capBytes, maxBytes uint64) experimental.LinearMemory {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.buf = make([]byte, 0, min(capBytes, m.maxBytes))
			return m
		}))
}

// Reallocate implements experimental.LinearMemory.
func (m *limitedMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size > m.maxBytes {
		m.refused = true
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	// Grow geometrically, never past the cap. Memory never shrinks, so the
	// bytes past len are still zero.
	newCap := min(max(size, 2*uint64(cap(m.buf))), m.maxBytes)
	nb := make([]byte, size, newCap)
	copy(nb, m.buf)
	m.buf = nb
	return m.buf
}

// Free implements experimental.LinearMemory.
func (m *limitedMemory) Free() { m.free() }

func (m *limitedMemory) free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buf = nil
}

func (m *limitedMemory) breached() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refused
}
