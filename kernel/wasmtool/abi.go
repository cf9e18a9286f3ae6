package wasmtool

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// wasiModule is the only import namespace a WASM tool may use.
const wasiModule = "wasi_snapshot_preview1"

// wasiFuncs is WASI preview 1 without sockets: every function a tool may
// import. The clock and random functions are always provided, but only
// real when granted (see Grants).
var wasiFuncs = map[string]bool{
	"args_get": true, "args_sizes_get": true,
	"environ_get": true, "environ_sizes_get": true,
	"clock_res_get": true, "clock_time_get": true,
	"fd_advise": true, "fd_allocate": true, "fd_close": true, "fd_datasync": true,
	"fd_fdstat_get": true, "fd_fdstat_set_flags": true, "fd_fdstat_set_rights": true,
	"fd_filestat_get": true, "fd_filestat_set_size": true, "fd_filestat_set_times": true,
	"fd_pread": true, "fd_prestat_dir_name": true, "fd_prestat_get": true, "fd_pwrite": true,
	"fd_read": true, "fd_readdir": true, "fd_renumber": true, "fd_seek": true,
	"fd_sync": true, "fd_tell": true, "fd_write": true,
	"path_create_directory": true, "path_filestat_get": true, "path_filestat_set_times": true,
	"path_link": true, "path_open": true, "path_readlink": true, "path_remove_directory": true,
	"path_rename": true, "path_symlink": true, "path_unlink_file": true,
	"poll_oneoff": true, "proc_exit": true, "proc_raise": true, "sched_yield": true,
	"random_get": true,
}

// wasmMagic is the preamble of a binary WebAssembly module, version 1.
var wasmMagic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// Section ids and external kinds of the WebAssembly binary format.
const (
	sectionImport = 2
	sectionExport = 7

	kindFunc   = 0
	kindMemory = 2
)

var externKinds = map[byte]string{0: "function", 1: "table", 2: "memory", 3: "global", 4: "tag"}

// Validate checks a module's interface without compiling it: the header,
// the exports the ABI needs and that every import is an allowed WASI
// function. Load does the same check first; a host that compiles lazily
// calls Validate at start so a bad module is still refused there.
func Validate(wasm []byte) error { return checkInterface(wasm) }

// checkInterface reads the import and export sections of a module and
// enforces the ABI: _start and memory exported, only allowed WASI imports.
// It runs before compilation, so a bad module costs nothing to reject. It
// does not validate the rest of the module; the compiler does that.
func checkInterface(b []byte) error {
	if len(b) < 4 || !bytes.Equal(b[:4], wasmMagic[:4]) {
		return errors.New("not a WebAssembly module: missing the \\0asm header")
	}
	if len(b) < 8 || !bytes.Equal(b[4:8], wasmMagic[4:]) {
		return errors.New("not a WebAssembly module: unsupported binary version (want 1)")
	}
	r := &reader{b: b[8:]}
	var haveStart, haveMemory bool
	for !r.done() {
		id := r.byte()
		size := r.u32()
		body := r.bytes(int(size))
		if r.err != nil {
			return fmt.Errorf("not a WebAssembly module: %w", r.err)
		}
		switch id {
		case sectionImport:
			if err := checkImports(&reader{b: body}); err != nil {
				return err
			}
		case sectionExport:
			s, m, err := readExports(&reader{b: body})
			if err != nil {
				return err
			}
			haveStart, haveMemory = s, m
		}
	}
	switch {
	case !haveStart:
		return errors.New("does not export a _start function: build it as a WASI command (GOOS=wasip1, no -buildmode)")
	case !haveMemory:
		return errors.New(`does not export its memory as "memory"`)
	}
	return nil
}

func checkImports(r *reader) error {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		mod, name, kind := r.name(), r.name(), r.byte()
		if r.err != nil {
			break
		}
		what := mod + "." + name
		switch {
		case kind != kindFunc:
			return fmt.Errorf("imports the %s %s; a WASM tool may import only WASI functions", kindName(kind), what)
		case mod != wasiModule:
			return fmt.Errorf("imports %s, which is not a WASI preview 1 function; a WASM tool may import only %s", what, wasiModule)
		case strings.HasPrefix(name, "sock_"):
			return fmt.Errorf("imports %s, which no WASM tool may use", what)
		case !wasiFuncs[name]:
			return fmt.Errorf("imports %s, which is not a WASI preview 1 function", what)
		}
		r.u32() // type index
	}
	if r.err != nil {
		return fmt.Errorf("not a WebAssembly module: import section: %w", r.err)
	}
	return nil
}

func readExports(r *reader) (start, memory bool, err error) {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		name, kind := r.name(), r.byte()
		r.u32() // index
		start = start || (name == "_start" && kind == kindFunc)
		memory = memory || (name == "memory" && kind == kindMemory)
	}
	if r.err != nil {
		return false, false, fmt.Errorf("not a WebAssembly module: export section: %w", r.err)
	}
	return start, memory, nil
}

func kindName(k byte) string {
	if s, ok := externKinds[k]; ok {
		return s
	}
	return fmt.Sprintf("item of kind %#x", k)
}

// reader decodes the few binary-format pieces checkInterface needs. The
// first error sticks; later reads return zero values.
type reader struct {
	b   []byte
	err error
}

var errTruncated = errors.New("unexpected end of data")

func (r *reader) done() bool { return r.err != nil || len(r.b) == 0 }

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errTruncated
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errTruncated
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// u32 reads an unsigned LEB128 of at most 5 bytes.
func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if shift == 28 && c > 0x0f {
			r.err = errors.New("integer too large")
			return 0
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errors.New("integer too long")
	return 0
}

func (r *reader) name() string { return string(r.bytes(int(r.u32()))) }
