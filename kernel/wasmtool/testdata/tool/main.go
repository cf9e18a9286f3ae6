// Command tool is the test guest for package wasmtool: one WASM tool whose
// "mode" argument picks a behaviour, good or bad. Called as "rawrequest"
// (argv[0]), it returns its request verbatim instead.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"
	"unsafe"

	"github.com/sparrow-cli/sparrow/sdk/wasm"
)

type args struct {
	Mode string `json:"mode"`
	Path string `json:"path,omitempty"`
	Text string `json:"text,omitempty"`
	Ops  []fsOp `json:"ops,omitempty"`
}

func main() {
	if len(os.Args) > 0 && os.Args[0] == "rawrequest" {
		rawRequest()
	}
	wasm.Run(func(req wasm.Request) (string, error) {
		var a args
		if err := req.Decode(&a); err != nil {
			return "", err
		}
		switch a.Mode {
		case "echo": // the happy path: echo the args and a workspace file
			b, err := os.ReadFile(path.Join(req.Workspace, a.Path))
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("args=%s file=%s", req.Args, b), nil
		case "read":
			b, err := os.ReadFile(a.Path)
			return string(b), err
		case "rawdotdot": // bypass Go's path cleaning: path_open on the preopen itself
			return "", rawOpen(a.Path)
		case "fs": // a script of file-system calls, one result line each
			return runOps(req.Workspace, a.Ops), nil
		case "write":
			return "wrote", os.WriteFile(path.Join(req.Workspace, a.Path), []byte(a.Text), 0o644)
		case "env":
			return strings.Join(append(os.Args, os.Environ()...), " "), nil
		case "clock":
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			return fmt.Sprintf("%d %s", time.Now().UnixNano(), hex.EncodeToString(b)), nil
		case "loop":
			for {
			}
		case "membomb":
			var keep [][]byte
			for {
				b := make([]byte, 1<<20)
				b[len(b)-1] = 1
				keep = append(keep, b)
			}
		case "bigout":
			line := []byte(strings.Repeat("x", 1023) + "\n")
			for {
				_, _ = os.Stdout.Write(line)
			}
		case "badjson":
			fmt.Print(`{"output": "unterminated`)
			os.Exit(0)
		case "exit3":
			fmt.Fprintln(os.Stderr, "something broke")
			os.Exit(3)
		}
		return "", fmt.Errorf("unknown mode %q", a.Mode)
	})
}

//go:wasmimport wasi_snapshot_preview1 path_open
func pathOpen(fd int32, dirflags uint32, path unsafe.Pointer, pathLen uint32, oflags uint32, rightsBase uint64, rightsInheriting uint64, fdflags uint32, resultFd unsafe.Pointer) uint32

// rawOpen opens p relative to file descriptor 3, the first preopen, the
// way a non-Go guest could.
func rawOpen(p string) error {
	b := []byte(p)
	var fd int32
	if errno := pathOpen(3, 0, unsafe.Pointer(&b[0]), uint32(len(b)), 0, 1<<1, 1<<1, 0, unsafe.Pointer(&fd)); errno != 0 {
		return fmt.Errorf("path_open %s: errno %d", p, errno)
	}
	return errors.New("path_open " + p + ": succeeded")
}

// rawRequest answers with the request exactly as read from stdin, without
// the sdk's decoding, so the host's encoding can be checked.
func rawRequest() {
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(1)
	}
	out, _ := json.Marshal(map[string]string{"output": string(b)})
	_, _ = os.Stdout.Write(out)
	os.Exit(0)
}
