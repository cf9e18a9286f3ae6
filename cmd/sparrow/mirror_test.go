package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

var (
	helloOnce sync.Once
	helloBin  string
	helloErr  error
)

// buildHello builds examples/hello-tool (a third-party plugin in its own
// module, against sdk only) once, and lays it out for `sparrow plugin
// package` in DIR: plugin.hcl on top, the binary in DIR/<os>_<arch>/.
//
//	hello DIR
func buildHello(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hello DIR")
	}
	src, _ := filepath.Abs(filepath.Join("..", "..", "examples", "hello-tool"))
	helloOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sparrow-test-hello-")
		if err != nil {
			helloErr = err
			return
		}
		helloBin = filepath.Join(dir, "hello-tool")
		cmd := exec.Command("go", "build", "-trimpath", "-o", helloBin, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			helloErr = &buildError{out: string(out), err: err}
		}
	})
	if helloErr != nil {
		ts.Fatalf("build hello-tool: %v", helloErr)
	}
	dst := ts.MkAbs(args[0])
	platform := filepath.Join(dst, runtime.GOOS+"_"+runtime.GOARCH)
	ts.Check(os.MkdirAll(platform, 0o755))
	bin, err := os.ReadFile(helloBin)
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(platform, "hello-tool"), bin, 0o755))
	manifest, err := os.ReadFile(filepath.Join(src, "plugin.hcl"))
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(dst, "plugin.hcl"), manifest, 0o644))
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// serveDir serves DIR over HTTP on loopback until the script ends and
// sets $MIRROR to its URL: a mirror is static files.
//
//	serve DIR
func serveDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: serve DIR")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(ts.MkAbs(args[0]))))
	ts.Defer(srv.Close)
	ts.Setenv("MIRROR", srv.URL)
}
