package pluginstall

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

func newUnpacker(t *testing.T, l limits) *unpacker {
	return &unpacker{dest: t.TempDir(), entry: "bin/run", limits: l.withDefaults(), what: "test.tar.gz",
		wrap: func(_ string, w io.Writer) io.Writer { return w }}
}

func TestUnpackWritesFilesWithFixedModes(t *testing.T) {
	u := newUnpacker(t, limits{})
	archive := tarGz(t, []tarEntry{
		{name: "./", typ: tar.TypeDir},
		{name: "./bin/", typ: tar.TypeDir},
		{name: "./bin/run", typ: tar.TypeReg, body: "#!/bin/sh\n"},
		{name: "share/doc/README", typ: tar.TypeReg, body: "read me\n"}, // parents implied
	})
	got, err := u.unpack(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bin/run": plugintrust.HashBytes([]byte("#!/bin/sh\n")), "share/doc/README": plugintrust.HashBytes([]byte("read me\n"))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hashes (-want +got):\n%s", diff)
	}
	for path, mode := range map[string]os.FileMode{"bin/run": 0o755, "share/doc/README": 0o644, "bin": os.ModeDir | 0o755, "share/doc": os.ModeDir | 0o755} {
		fi, err := os.Stat(filepath.Join(u.dest, path))
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode(), err, mode)
		}
	}
}

func TestEntryName(t *testing.T) {
	for raw, want := range map[string]string{
		"plugin.hcl": "plugin.hcl", "./plugin.hcl": "plugin.hcl", "lib/": "lib", "./": "", ".": "",
		"../x": "!", "a/../../x": "!", "a/..": "!", "..": "!", "/abs": "!", "a//b": "!", "a/./b": "!", `a\b`: "!", "./../x": "!",
	} {
		got, err := entryName(raw)
		if (err != nil) != (want == "!") || (err == nil && got != want) {
			t.Errorf("entryName(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// A 2 GiB file of zeros, generated as it is read, is refused at the real
// 1 GiB cap without being decompressed.
func TestUnpackRefusesBombWithoutReadingIt(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		gz := gzip.NewWriter(pw)
		tw := tar.NewWriter(gz)
		err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Size: 2 << 30, Mode: 0o644})
		if err == nil {
			_, err = io.CopyN(tw, zeros{}, 2<<30)
		}
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	u := newUnpacker(t, limits{})
	start := time.Now()
	_, err := u.unpack(pr)
	wantErr(t, err, "unpacks to more than 1 GiB", "decompression bomb")
	if u.total != 0 {
		t.Errorf("wrote %d bytes before refusing", u.total)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to refuse", d)
	}
}

// Bytes count across files, and the copy stops at the cap.
func TestUnpackCountsBytesAcrossFiles(t *testing.T) {
	u := newUnpacker(t, limits{unpacked: 2500})
	archive := tarGz(t, []tarEntry{
		{name: "a", typ: tar.TypeReg, body: string(make([]byte, 1000))},
		{name: "b", typ: tar.TypeReg, body: string(make([]byte, 1000))},
		{name: "c", typ: tar.TypeReg, body: string(make([]byte, 1000))},
	})
	_, err := u.unpack(bytes.NewReader(archive))
	wantErr(t, err, "unpacks to more than 2500 bytes")
	if u.total > 2500 {
		t.Errorf("wrote %d bytes, more than the cap", u.total)
	}
}

func TestUnpackRefusesOtherEntryTypes(t *testing.T) {
	for typ, want := range map[byte]string{
		tar.TypeSymlink: "symbolic link", tar.TypeLink: "hard link", tar.TypeChar: "device", tar.TypeBlock: "device",
		tar.TypeFifo: "FIFO", tar.TypeCont: "entry type '7' not allowed",
	} {
		u := newUnpacker(t, limits{})
		_, err := u.unpack(bytes.NewReader(tarGz(t, []tarEntry{{name: "x", typ: typ, link: "y"}})))
		wantErr(t, err, want)
	}
}

func TestUnpackRefusesFileUnderFile(t *testing.T) {
	u := newUnpacker(t, limits{})
	_, err := u.unpack(bytes.NewReader(tarGz(t, []tarEntry{
		{name: "a", typ: tar.TypeReg, body: "x"},
		{name: "a/b", typ: tar.TypeReg, body: "y"},
	})))
	wantErr(t, err, "not a directory")
}
