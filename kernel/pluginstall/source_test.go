package pluginstall

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// faultyServer serves a mirror directory over HTTP and misbehaves on
// chosen paths.
type faultyServer struct {
	*httptest.Server
	mu     sync.Mutex
	faults map[string]http.HandlerFunc
}

func newFaultyServer(t *testing.T, dir string) *faultyServer {
	f := &faultyServer{faults: map[string]http.HandlerFunc{}}
	files := http.FileServer(http.Dir(dir))
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		fault := f.faults[strings.TrimPrefix(r.URL.Path, "/")]
		f.mu.Unlock()
		if fault != nil {
			fault(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *faultyServer) fail(path string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[path] = h
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", code) }
}

// stall sends nothing until the client gives up.
func stall(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// trickle sends headers, then a byte now and then, never finishing.
func trickle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", "1000000")
	w.WriteHeader(http.StatusOK)
	for {
		if _, err := w.Write([]byte{0}); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func httpSource(t *testing.T, url string) *HTTPSource {
	s, err := NewHTTPSource(url, HTTPConfig{ConnectTimeout: time.Second, ResponseHeaderTimeout: 150 * time.Millisecond, FileTimeout: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A failing HTTP mirror, at any file of an upgrade, leaves the installed
// version and the lock file as they were.
func TestHTTPMirrorFailures(t *testing.T) {
	const name, v = "hello-tool", "0.2.0"
	archive := versionPath(name, v, plugintrust.ArchiveName(name, v, testPlatform))
	sums := versionPath(name, v, plugintrust.SumsName(name, v))
	manifest := versionPath(name, v, plugintrust.ManifestName(name, v))
	for _, tc := range []struct {
		name  string
		path  string
		fault http.HandlerFunc
		down  bool
		want  []string
	}{
		{name: "index 404", path: name + "/index.json", fault: status(404), want: []string{"hello-tool/index.json not found (404)"}},
		{name: "archive 404", path: archive, fault: status(404), want: []string{archive + " not found (404)"}},
		{name: "signature 500", path: manifest + ".sig", fault: status(500), want: []string{manifest + ".sig: the server answered 500 Internal Server Error"}},
		{name: "sums 503", path: sums, fault: status(503), want: []string{sums + ": the server answered 503 Service Unavailable"}},
		{name: "no response headers", path: manifest, fault: stall, want: []string{manifest + ": timed out: no response within 150ms"}},
		{name: "archive trickles", path: archive, fault: trickle, want: []string{archive + ": timed out after 400ms"}},
		{name: "unreachable", down: true, want: []string{"mirror http://127.0.0.1:", "unreachable", "connection refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMirror(t)
			m.publish(relSpec{name: name, version: "0.1.0"})
			srv := newFaultyServer(t, m.dir)
			e := newEnv(t, httpSource(t, srv.URL), m.key.Public())
			e.install(name, "")
			m.publish(relSpec{name: name, version: v})
			if tc.fault != nil {
				srv.fail(tc.path, tc.fault)
			}
			if tc.down {
				e.opts.Sources = []Source{httpSource(t, closedPort(t))}
			}
			before := e.snapshot()
			start := time.Now()
			_, err := Install(t.Context(), e.opts, name, "")
			wantErr(t, err, tc.want...)
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v: a timeout did not fire", d)
			}
			e.assertUnchanged(before)
			e.assertIntact()
		})
	}
}

func TestMirrorsAreTriedInOrder(t *testing.T) {
	m := newMirror(t)
	m.publish(relSpec{name: "hello-tool", version: "0.1.0"})
	empty := newMirror(t)
	down := httpSource(t, closedPort(t))
	e := newEnv(t, down, m.key.Public())
	e.opts.Sources = []Source{down, empty.source(), m.source()}
	r := e.install("hello-tool", "")
	if r.Source != m.source().String() {
		t.Errorf("installed from %s, want %s", r.Source, m.source())
	}
	e.opts.Sources = []Source{down, empty.source()}
	_, err := Install(t.Context(), e.opts, "hello-tool", "")
	wantErr(t, err, "unreachable", empty.dir+": hello-tool/index.json not found")
}

func TestHTTPSizeCaps(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		io.WriteString(w, strings.Repeat("x", 2000))
	}))
	t.Cleanup(srv.Close)
	src := httpSource(t, srv.URL)
	for _, path := range []string{"declared", "chunked"} {
		_, err := fetch(t.Context(), src, path, 1000)
		var tooLarge *TooLargeError
		if !errors.As(err, &tooLarge) {
			t.Fatalf("%s: error %v, want a TooLargeError", path, err)
		}
		wantErr(t, err, path+" is larger than the 1000 bytes allowed")
	}
	data, err := fetch(t.Context(), src, "fits", 2000)
	if err != nil || len(data) != 2000 {
		t.Errorf("fetch of exactly the cap: %d bytes, %v", len(data), err)
	}
}

func TestDirSource(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "big"), make([]byte, 100), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	src, _ := NewDirSource(dir)
	for _, tc := range []struct {
		path string
		want string
	}{
		{"missing", dir + ": missing not found"},
		{"../escape", `"../escape" is not a path inside the mirror`},
		{"/etc/passwd", "is not a path inside the mirror"},
		{"big", "big is larger than the 50 bytes allowed"},
		{"sub", "sub: not a regular file"},
	} {
		_, err := fetch(t.Context(), src, tc.path, 50)
		wantErr(t, err, tc.want)
	}
	var nf *NotFoundError
	if _, err := fetch(t.Context(), src, "missing", 50); !errors.As(err, &nf) {
		t.Errorf("missing file: %v, want a NotFoundError", err)
	}
}

func TestParseSource(t *testing.T) {
	wd, _ := os.Getwd()
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "https://plugins.example.com/sparrow/", want: "https://plugins.example.com/sparrow"},
		{in: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{in: "/srv/mirror/", want: "/srv/mirror"},
		{in: "mirror", want: filepath.Join(wd, "mirror")},
		{in: "file:///srv/mirror", want: "/srv/mirror"},
		{in: "ftp://example.com", err: `scheme "ftp" is not supported`},
		{in: "https://", err: "want http(s)://host/path"},
		{in: "https://example.com/x?y=1", err: "want http(s)://host/path"},
		{in: "", err: "empty location"},
	} {
		src, err := ParseSource(tc.in)
		if tc.err != "" {
			wantErr(t, err, tc.err)
			continue
		}
		if err != nil || src.String() != tc.want {
			t.Errorf("ParseSource(%q) = %v, %v; want %s", tc.in, src, err, tc.want)
		}
	}
}
