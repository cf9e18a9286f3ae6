package wasmtool

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fsLayout is a workspace with neighbours: parent holds outside.txt and
// outdir/secret.txt, which no guest may reach, and ws is the workspace.
type fsLayout struct{ parent, ws string }

// newLayout builds:
//
//	parent/outside.txt            "OUTSIDE"
//	parent/outdir/secret.txt      "OUTSIDE"
//	ws/hello.txt                  "hello"
//	ws/sub/file.txt               "sub file"
//	ws/sub/.env, ws/.env          hidden
//	ws/.git/config                hidden
//	ws/empty/
//
// and the symbolic links in links below.
func newLayout(t testing.TB) fsLayout {
	t.Helper()
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	files := map[string]string{
		"outside.txt":       "OUTSIDE",
		"outdir/secret.txt": "OUTSIDE",
		"ws/hello.txt":      "hello",
		"ws/sub/file.txt":   "sub file",
		"ws/sub/.env":       "SUBENV",
		"ws/.env":           "ENV",
		"ws/.git/config":    "GITCONFIG",
		"ws/empty/.keep":    "",
	}
	for name, body := range files {
		p := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(ws, "empty/.keep")); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"abs":        filepath.Join(parent, "outside.txt"), // absolute, outside
		"absdir":     filepath.Join(parent, "outdir"),      // absolute directory, outside
		"up":         "../outside.txt",                     // relative, outside
		"chain1":     "chain2",                             // chain that ends outside
		"chain2":     "sub/up2",
		"sub/up2":    "../../outside.txt",
		"updir":      "..", // the workspace's parent
		"inlink":     "hello.txt",
		"chainin":    "inlink",
		"sublink":    "sub",
		"sub/back":   "../hello.txt",
		"envlink":    ".env",
		"subenvlink": "sub/.env",
		"gitlink":    ".git",
		"dotlink":    "sub/../.env",
		"loop":       "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	return fsLayout{parent: parent, ws: ws}
}

// hideDefault hides .env, .git and .ssh anywhere, like the default
// denied paths.
func hideDefault(rel string) bool {
	for el := range strings.SplitSeq(rel, "/") {
		switch el {
		case ".env", ".git", ".ssh":
			return true
		}
	}
	return false
}

// fsStep is one file-system call in the guest and its expected result:
// "ok", "ok:<data>" or an errno name. The call is written
// "op path [arg]": the arg is the text of write/create/append, the size
// of truncate, the destination of rename/link and the target of symlink.
type fsStep struct{ call, want string }

type guestOp struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	To   string `json:"to,omitempty"`
	Text string `json:"text,omitempty"`
	Size int64  `json:"size,omitempty"`
}

func (s fsStep) op(t *testing.T) guestOp {
	f := strings.Fields(s.call)
	if len(f) < 2 || len(f) > 3 {
		t.Fatalf("bad step %q", s.call)
	}
	o := guestOp{Op: f[0], Path: f[1]}
	if len(f) == 3 {
		switch o.Op {
		case "write", "create", "append":
			o.Text = f[2]
		case "truncate":
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			o.Size = n
		default:
			o.To = f[2]
		}
	}
	return o
}

// runSteps runs steps in one guest call and returns the result lines.
func runSteps(t *testing.T, m *Module, c Call, steps []fsStep) []string {
	t.Helper()
	ops := make([]guestOp, len(steps))
	for i, s := range steps {
		ops[i] = s.op(t)
	}
	args, err := json.Marshal(map[string]any{"mode": "fs", "ops": ops})
	if err != nil {
		t.Fatal(err)
	}
	c.Args = args
	res, err := m.Call(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != "" {
		t.Fatalf("tool error: %s", res.Error)
	}
	return strings.Split(res.Output, "\n")
}

func readHost(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func assertAbsent(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists on the host (%v)", p, err)
		}
	}
}

// assertHiddenIntact checks that the hidden files and the outside files
// still hold what newLayout wrote.
func assertHiddenIntact(t *testing.T, l fsLayout) {
	t.Helper()
	for p, want := range map[string]string{
		filepath.Join(l.ws, ".env"):                  "ENV",
		filepath.Join(l.ws, "sub/.env"):              "SUBENV",
		filepath.Join(l.ws, ".git/config"):           "GITCONFIG",
		filepath.Join(l.parent, "outside.txt"):       "OUTSIDE",
		filepath.Join(l.parent, "outdir/secret.txt"): "OUTSIDE",
	} {
		if got := readHost(t, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	entries, err := os.ReadDir(filepath.Join(l.parent, "outdir"))
	if err != nil || len(entries) != 1 {
		t.Errorf("outdir holds %v (%v), want only secret.txt", entries, err)
	}
}

func TestWorkspaceFromGuest(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	rootList := "ok:abs,absdir,chain1,chain2,chainin,dotlink,empty,envlink,gitlink,hello.txt,inlink,loop,sub,subenvlink,sublink,up,updir"
	tests := []struct {
		name     string
		writable bool
		hide     func(string) bool // nil: hideDefault
		steps    []fsStep
		check    func(t *testing.T, l fsLayout)
	}{
		{name: "absolute symlink to a host file", steps: []fsStep{
			{"read abs", "EPERM"},
			{"stat abs", "EPERM"},
			{"lstat abs", "ok:symlink"},
		}},
		{name: "relative symlinks climbing out", steps: []fsStep{
			{"read up", "EPERM"},
			{"read chain1", "EPERM"},
			{"read sub/up2", "EPERM"},
			{"stat chain1", "EPERM"},
		}},
		{name: "dot-dot traversal", steps: []fsStep{
			{"rawopen ../outside.txt", "EPERM"},
			{"rawopen sub/../../outside.txt", "EPERM"},
			{"rawopen sublink/../../outside.txt", "EPERM"},
			{"rawopen sub/../hello.txt", "ok"},
		}},
		{name: "symlinked directory outside", steps: []fsStep{
			{"list absdir", "EPERM"},
			{"read absdir/secret.txt", "EPERM"},
			{"list updir", "EPERM"},
			{"read updir/outside.txt", "EPERM"},
			{"stat updir/ws/hello.txt", "EPERM"},
		}},
		{name: "symlinks that stay inside", steps: []fsStep{
			{"read inlink", "ok:hello"},
			{"read chainin", "ok:hello"},
			{"read sublink/file.txt", "ok:sub file"},
			{"read sub/back", "ok:hello"},
			{"stat sublink", "ok:dir"},
			{"lstat sublink", "ok:symlink"},
			{"list sublink", "ok:back,file.txt,up2"},
			{"readlink sub/back", "ok:../hello.txt"},
			{"read loop", "ELOOP"},
		}},
		{name: "hidden paths cannot be read, stat'ed or listed", steps: []fsStep{
			{"read .env", "ENOENT"},
			{"read sub/.env", "ENOENT"},
			{"read .git/config", "ENOENT"},
			{"stat .env", "ENOENT"},
			{"lstat .git", "ENOENT"},
			{"list .git", "ENOENT"},
			{"rawopen .env", "ENOENT"},
			{"list .", rootList},
			{"list sub", "ok:back,file.txt,up2"},
		}},
		{name: "symlinks to hidden paths cannot be followed", steps: []fsStep{
			{"read envlink", "ENOENT"},
			{"read subenvlink", "ENOENT"},
			{"read gitlink/config", "ENOENT"},
			{"list gitlink", "ENOENT"},
			{"read dotlink", "ENOENT"},
			{"lstat envlink", "ok:symlink"},
		}},
		{name: "hidden paths cannot be created, renamed or linked", writable: true, steps: []fsStep{
			{"write .env x", "EPERM"},
			{"create sub/.env x", "EPERM"},
			{"create .ssh x", "EPERM"},
			{"mkdir .ssh", "EPERM"},
			{"write .git/config x", "ENOENT"},
			{"mkdir .git/hooks2", "ENOENT"},
			{"write envlink x", "EPERM"},
			{"rename hello.txt .env", "EPERM"},
			{"rename hello.txt sub/.env", "EPERM"},
			{"rename .env stolen.txt", "ENOENT"},
			{"rename .git stolen", "ENOENT"},
			{"rename sub/.env stolen.txt", "ENOENT"},
			{"link .env stolen.txt", "ENOENT"},
			{"link hello.txt .env", "EPERM"},
			{"symlink k .env", "EPERM"},
			{"symlink k2 sub/../.git/config", "EPERM"},
			{"unlink .env", "ENOENT"},
			{"chtimes .env", "ENOENT"},
			{"read hello.txt", "ok:hello"},
		}, check: func(t *testing.T, l fsLayout) {
			assertAbsent(t, filepath.Join(l.ws, "stolen.txt"), filepath.Join(l.ws, "stolen"),
				filepath.Join(l.ws, ".ssh"), filepath.Join(l.ws, "k"), filepath.Join(l.ws, "k2"))
			if got := readHost(t, filepath.Join(l.ws, "hello.txt")); got != "hello" {
				t.Errorf("hello.txt = %q", got)
			}
		}},
		{name: "moving a directory may not reveal a hidden path", writable: true,
			hide: func(rel string) bool { return rel == "sub/file.txt" },
			steps: []fsStep{
				{"read sub/file.txt", "ENOENT"},
				{"rename sub moved", "EPERM"},
				{"rename sublink moved", "ok"},
				{"read moved/file.txt", "ENOENT"},
			}, check: func(t *testing.T, l fsLayout) {
				if got := readHost(t, filepath.Join(l.ws, "sub/file.txt")); got != "sub file" {
					t.Errorf("sub/file.txt = %q", got)
				}
			}},
		{name: "read-only call refuses every change", steps: []fsStep{
			{"write hello.txt x", "EROFS"},
			{"create new.txt x", "EROFS"},
			{"append hello.txt x", "EROFS"},
			{"truncate hello.txt 0", "EROFS"},
			{"mkdir newdir", "EROFS"},
			{"rmdir empty", "EROFS"},
			{"unlink hello.txt", "EROFS"},
			{"rename hello.txt moved.txt", "EROFS"},
			{"link hello.txt hard.txt", "EROFS"},
			{"symlink l hello.txt", "EROFS"},
			{"chtimes hello.txt", "EROFS"},
			// WASI preview 1 has no chmod: Go's wasip1 os.Chmod only
			// stats, so it "succeeds" without changing anything.
			{"chmod hello.txt", "ok"},
			{"read hello.txt", "ok:hello"},
		}, check: func(t *testing.T, l fsLayout) {
			fi, err := os.Stat(filepath.Join(l.ws, "hello.txt"))
			if err != nil || fi.Mode().Perm() != 0o644 || fi.ModTime().Year() == 2001 {
				t.Errorf("hello.txt changed: %v %v", fi, err)
			}
			if got := readHost(t, filepath.Join(l.ws, "hello.txt")); got != "hello" {
				t.Errorf("hello.txt = %q", got)
			}
			assertAbsent(t, filepath.Join(l.ws, "new.txt"), filepath.Join(l.ws, "newdir"), filepath.Join(l.ws, "moved.txt"),
				filepath.Join(l.ws, "hard.txt"), filepath.Join(l.ws, "l"))
			if _, err := os.Stat(filepath.Join(l.ws, "empty")); err != nil {
				t.Errorf("empty: %v", err)
			}
		}},
		{name: "writable call changes the workspace", writable: true, steps: []fsStep{
			{"create new.txt one", "ok"},
			{"create new.txt again", "EEXIST"},
			{"append new.txt two", "ok"},
			{"read new.txt", "ok:onetwo"},
			{"write hello.txt HELLO", "ok"},
			{"truncate hello.txt 2", "ok"},
			{"read hello.txt", "ok:HE"},
			{"mkdir d", "ok"},
			{"mkdir d", "EEXIST"},
			{"rename new.txt d/moved.txt", "ok"},
			{"list d", "ok:moved.txt"},
			{"rename d d2", "ok"},
			{"read d2/moved.txt", "ok:onetwo"},
			{"unlink d2/moved.txt", "ok"},
			{"rmdir d2", "ok"},
			{"rmdir sub", "ENOTEMPTY"},
			{"rmdir hello.txt", "ENOTDIR"},
			{"unlink empty", "EISDIR"},
			{"symlink l sub/file.txt", "ok"},
			{"read l", "ok:sub file"},
			{"link hello.txt sub/hard.txt", "ok"},
			{"chtimes hello.txt", "ok"},
			{"write inlink via-link", "ok"},
		}, check: func(t *testing.T, l fsLayout) {
			for p, want := range map[string]string{"hello.txt": "via-link", "sub/hard.txt": "via-link"} {
				if got := readHost(t, filepath.Join(l.ws, p)); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			if target, err := os.Readlink(filepath.Join(l.ws, "l")); err != nil || target != "sub/file.txt" {
				t.Errorf("l -> %q, %v", target, err)
			}
			fi, err := os.Lstat(filepath.Join(l.ws, "inlink"))
			if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("inlink is no longer a symlink: %v %v", fi, err)
			}
			assertAbsent(t, filepath.Join(l.ws, "new.txt"), filepath.Join(l.ws, "d"), filepath.Join(l.ws, "d2"))
		}},
		{name: "nothing can be moved or made outside", writable: true, steps: []fsStep{
			{"rename hello.txt absdir/stolen.txt", "EPERM"},
			{"rename hello.txt updir/stolen.txt", "EPERM"},
			{"rename hello.txt updir/outdir/stolen.txt", "EPERM"},
			{"link hello.txt absdir/hard.txt", "EPERM"},
			{"write absdir/new.txt x", "EPERM"},
			{"write up x", "EPERM"},
			{"mkdir updir/x", "EPERM"},
			{"symlink esc ../outside.txt", "EPERM"},
			{"symlink esc /etc/passwd", "EPERM"},
			{"truncate abs 0", "EPERM"},
			{"unlink updir/outside.txt", "EPERM"},
			{"read hello.txt", "ok:hello"},
		}, check: func(t *testing.T, l fsLayout) {
			assertAbsent(t, filepath.Join(l.parent, "stolen.txt"), filepath.Join(l.parent, "x"),
				filepath.Join(l.parent, "outdir/new.txt"), filepath.Join(l.ws, "esc"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			hide := tc.hide
			if hide == nil {
				hide = hideDefault
			}
			got := runSteps(t, m, Call{Workspace: l.ws, Writable: tc.writable, Hide: hide}, tc.steps)
			var want, calls []string
			for _, s := range tc.steps {
				want = append(want, s.want)
				calls = append(calls, s.call)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d results for %d steps:\n%s", len(got), len(want), strings.Join(got, "\n"))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s = %s, want %s", calls[i], got[i], want[i])
				}
			}
			assertHiddenIntact(t, l)
			if tc.check != nil {
				tc.check(t, l)
			}
		})
	}
}

func TestCallToolName(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	ws := workspace(t, nil)

	res, err := m.Call(context.Background(), Call{Tool: "rawrequest", Args: json.RawMessage(`{"pattern":"x"}`), Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"tool":"rawrequest","args":{"pattern":"x"},"workspace":"/workspace"}`, res.Output); diff != "" {
		t.Errorf("request the guest read (-want +got):\n%s", diff)
	}

	res, err = m.Call(context.Background(), Call{Tool: "grep", Args: mode("env")})
	if err != nil || res.Output != "grep" {
		t.Errorf("argv with Tool grep = %q, %v; want grep", res.Output, err)
	}

	_, err = m.Call(context.Background(), Call{Tool: "grep", Args: mode("exit3")})
	if err == nil || err.Error() != "tool grep: exit 3: something broke" {
		t.Errorf("error = %v, want it to name the tool grep", err)
	}
	_, err = m.Call(context.Background(), Call{Tool: "grep", Args: json.RawMessage(`{`)})
	if err == nil || err.Error() != "tool grep: arguments are not valid JSON" {
		t.Errorf("error = %v, want it to name the tool grep", err)
	}
}

func TestCallWorkspaceHideNil(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	l := newLayout(t)
	got := runSteps(t, m, Call{Workspace: l.ws}, []fsStep{{"read .env", ""}, {"read envlink", ""}, {"read up", ""}})
	if diff := cmp.Diff([]string{"ok:ENV", "ok:ENV", "EPERM"}, got); diff != "" {
		t.Errorf("with Hide nil (-want +got):\n%s", diff)
	}
}

// Times set by a guest land on the host.
func TestCallWorkspaceChtimes(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	l := newLayout(t)
	got := runSteps(t, m, Call{Workspace: l.ws, Writable: true, Hide: hideDefault}, []fsStep{{"chtimes inlink", ""}})
	if diff := cmp.Diff([]string{"ok"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(l.ws, "hello.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC); !fi.ModTime().Equal(want) {
		t.Errorf("hello.txt mtime = %s, want %s (set through inlink)", fi.ModTime(), want)
	}
}
