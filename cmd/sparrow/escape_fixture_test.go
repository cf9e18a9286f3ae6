package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// prelude starts every script. The denied names are assembled at run
// time, so no word of the command line names them: the argv check every
// backend applies is not what is under test, the sandbox is. The helpers
// connect to a TCP address or a unix socket ("@name" is abstract) and
// print the first line the other end sends.
const prelude = `ENV=.e""nv ENVL=.e""nv.local GIT=.g""it SSH=.s""sh RSA=id_r""sa ED=id_e""d25519
connect_tcp() { perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(PeerAddr => $ARGV[0], Timeout => 3) or die "connect $ARGV[0]: $!\n"; print scalar <$s>' "$1"; }
connect_unix() { perl -MSocket -MIO::Socket::UNIX -e '($p = $ARGV[0]) =~ s/^\@/\0/; $s = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $p) or die "connect $ARGV[0]: $!\n"; print scalar <$s>' "$1"; }
`

// deniedNames are the default denied paths (DESIGN.md, "Security invariants").
var deniedNames = []string{".git", ".env", ".env.local", ".ssh", "id_rsa", "id_ed25519"}

// shadowLine matches an /etc/shadow entry (not an /etc/passwd one).
var shadowLine = regexp.MustCompile(`(?m)^root:[^:\n]*:\d*:\d*:\d*:\d*:`)

// skipError is a setup's way to say the attack cannot run here.
type skipError string

func (s skipError) Error() string { return string(s) }

// fixture is one attack's world: a $HOME full of credentials with the
// workspace (a git repository) inside it, a directory outside both, and a
// neighbour's home.
type fixture struct {
	env    *escapeEnv
	runner runner
	dir    string
	// home is $HOME; ws, the workspace, is inside it.
	home, ws string
	// out is a directory outside the workspace and home; secretDir in it
	// is the working directory of the host process setups start.
	out, secretDir string
	// other is another user's home; extra holds --extra-read/write dirs;
	// xdg is the runner's (shared) XDG base for sparrow's own files.
	other, extra, xdg string
	// fd3 is the secret file sparrow is started with open on fd 3.
	fd3 string
	// marker starts with secretPrefix and is in every planted secret;
	// tag marks the command's processes; pwn names files an attack tries
	// to drop outside.
	marker, tag, pwn string
	vars             map[string]string
	// status is the host's `git status --porcelain --ignored` before.
	status   string
	accepted atomic.Int64
	closers  []func()
}

func newFixture(e *escapeEnv, r runner, idx int) (*fixture, error) {
	dir := filepath.Join(e.base, fmt.Sprintf("%s-%d", r.name, idx))
	f := &fixture{env: e, runner: r, dir: dir,
		home: filepath.Join(dir, "home"), out: filepath.Join(dir, "out"),
		other: filepath.Join(dir, "other"), extra: filepath.Join(dir, "extra"), xdg: filepath.Join(e.base, "xdg-"+r.name),
		fd3:    filepath.Join(dir, "fd3-secret"),
		marker: secretPrefix + randomHex(8),
		tag:    fmt.Sprintf("4%02d.%06d", idx%100, randInt(1000000)),
		pwn:    "sparrow-escape-pwn-" + randomHex(6),
	}
	f.ws = filepath.Join(f.home, "ws")
	f.secretDir = filepath.Join(f.out, "secretdir")
	m := f.marker
	files := map[string]string{
		"home/.ssh/id_rsa":             "-----BEGIN OPENSSH PRIVATE KEY-----\n" + m + "-ssh\n-----END OPENSSH PRIVATE KEY-----\n",
		"home/.ssh/config":             "Host *\n  IdentityFile ~/.ssh/id_rsa\n",
		"home/.aws/credentials":        "[default]\naws_access_key_id = AKIA\naws_secret_access_key = " + m + "-aws\n",
		"home/.config/gh/hosts.yml":    "github.com:\n    oauth_token: " + m + "-gh\n",
		"home/.netrc":                  "machine github.com login x password " + m + "-netrc\n",
		"home/.docker/config.json":     `{"auths": {"ghcr.io": {"auth": "` + m + `-docker"}}}` + "\n",
		"home/.bash_history":           "export GITHUB_TOKEN=" + m + "-history\n",
		"home/.gitconfig":              "[credential]\n\thelper = store\n[url \"https://x:" + m + "-gitconfig@github.com/\"]\n\tinsteadOf = https://github.com/\n",
		"home/.git-credentials":        "https://x:" + m + "-gitcreds@github.com\n",
		"out/secretdir/secret.txt":     m + "-cwd\n",
		"out/target.txt":               "host file outside the workspace\n",
		"other/notes.txt":              m + "-other\n",
		"extra/ro/data.txt":            "extra-read-ok\n",
		"fd3-secret":                   m + "-fd\n",
		"home/ws/.env":                 "API_KEY=" + m + "-env\n",
		"home/ws/.env.local":           "DB_PASSWORD=" + m + "-envlocal\n",
		"home/ws/deploy/id_ed25519":    m + "-wskey\n",
		"home/ws/src/.ssh/known_hosts": m + "-wsssh\n",
	}
	repo, err := e.template()
	if err != nil {
		return nil, err
	}
	if err := copyTree(repo, f.ws); err != nil {
		return nil, fmt.Errorf("copy the template repository: %w", err)
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(f.extra, "rw"), 0o755); err != nil {
		return nil, err
	}
	// A real user's secrets are private; the neighbour's notes are not
	// (DAC lets anyone read them, only the sandbox can stop it).
	for _, p := range []string{filepath.Join(f.home, ".ssh"), f.secretDir} {
		os.Chmod(p, 0o700)
	}
	for _, p := range []string{filepath.Join(f.home, ".ssh", "id_rsa"), filepath.Join(f.home, ".aws", "credentials"), filepath.Join(f.home, ".netrc")} {
		os.Chmod(p, 0o600)
	}
	if f.status, err = f.git("status", "--porcelain", "--ignored"); err != nil {
		return nil, err
	}
	// MARKER is for setups (listener replies, environments); a script
	// that names it is refused (see try).
	f.vars = map[string]string{
		"MARKER": f.marker, "HOME": f.home, "WS": f.ws, "OUT": f.out, "OTHER": f.other, "EXTRA": f.extra,
		"SECRETDIR": f.secretDir, "TAG": f.tag, "PWN": f.pwn, "HOSTIP": e.hostIP,
	}
	for k, v := range syscallNumbers() {
		f.vars[k] = v
	}
	return f, nil
}

// template returns the workspace every fixture starts from, made once: a
// repository with one commit, and nested/ a repository of its own (a
// vendored checkout).
func (e *escapeEnv) template() (string, error) {
	e.repoOnce.Do(func() {
		dir := filepath.Join(e.base, "template-ws")
		for rel, content := range map[string]string{
			"README.md": "# project\n", "tracked.txt": "tracked\n",
			".gitignore": ".env\n.env.local\ndeploy/\n", "nested/lib.txt": "nested repository\n",
		} {
			p := filepath.Join(dir, rel)
			if e.repoErr = os.MkdirAll(filepath.Dir(p), 0o755); e.repoErr != nil {
				return
			}
			if e.repoErr = os.WriteFile(p, []byte(content), 0o644); e.repoErr != nil {
				return
			}
		}
		for _, args := range [][]string{
			{"init", "-q", "-b", "main"},
			{"add", "README.md", "tracked.txt", ".gitignore"},
			{"commit", "-q", "-m", "initial commit"},
			{"-C", "nested", "init", "-q", "-b", "main"},
		} {
			if _, e.repoErr = runGit(dir, args...); e.repoErr != nil {
				return
			}
		}
		e.repo = dir
	})
	return e.repo, e.repoErr
}

// copyTree copies the directory src to dst: directories, files with
// their modes, symlinks.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		}
		return copyFile(p, to, fi.Mode().Perm())
	})
}

// git runs git on the host in the workspace, whoever owns it.
func (f *fixture) git(args ...string) (string, error) { return runGit(f.ws, args...) }

func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// own hands the fixture to the unprivileged runner.
func (f *fixture) own() error {
	if !f.runner.setpriv {
		return nil
	}
	return filepath.WalkDir(f.dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, f.runner.uid, f.runner.gid); err != nil {
			return fmt.Errorf("chown %s: %w", p, err)
		}
		return nil
	})
}

func (f *fixture) close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
	os.RemoveAll(f.dir)
}

// expand replaces @NAME@ placeholders with the fixture's values.
func (f *fixture) expand(s string) string {
	pairs := make([]string, 0, 2*len(f.vars))
	for _, k := range sortedKeys(f.vars) {
		pairs = append(pairs, "@"+k+"@", f.vars[k])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// sparrowEnv is sparrow's environment: what it needs, plus secrets that
// must not reach the command.
func (f *fixture) sparrowEnv() []string {
	return []string{
		"HOME=" + f.home, "USER=" + f.runner.username, "LANG=C.UTF-8", "TERM=dumb",
		"PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"XDG_CONFIG_HOME=" + filepath.Join(f.xdg, "config"), "XDG_DATA_HOME=" + filepath.Join(f.xdg, "data"),
		"XDG_STATE_HOME=" + filepath.Join(f.xdg, "state"), "XDG_CACHE_HOME=" + filepath.Join(f.xdg, "cache"),
		"SPARROW_PLUGIN_PATH=" + f.env.plugins,
		"SPARROW_TEST_SECRET=" + f.marker + "-env1",
		"AWS_SECRET_ACCESS_KEY=" + f.marker + "-env2",
	}
}

// hostSleep starts a long sleep on the host, as the runner, in secretDir
// and with a secret in its environment; @PID@ is its pid.
func (f *fixture) hostSleep() error {
	cmd := f.runner.command(context.Background(), "sleep", "1000")
	cmd.Dir = f.secretDir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SPARROW_TEST_SECRET=" + f.marker + "-sleepenv"}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("host sleep: %w", err)
	}
	// setpriv execs sleep in the same process: the pid is the sleep's.
	f.vars["PID"] = strconv.Itoa(cmd.Process.Pid)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	f.closers = append(f.closers, func() { cmd.Process.Kill(); <-done })
	// Wait until setpriv has become sleep, so /proc shows the real thing.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if p, _, _, ok := readProc(cmd.Process.Pid); ok && p.comm == "sleep" {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("host sleep never started")
}

// sleepState is the host sleep's state letter ("S", "T", ...), "" once gone.
func (f *fixture) sleepState() string {
	pid, _ := strconv.Atoi(f.vars["PID"])
	if _, _, state, ok := readProc(pid); ok {
		return state
	}
	return ""
}

// listen serves reply to every connection on network/addr, counting them
// in f.accepted. A unix socket is made reachable (by DAC) for the runner.
func (f *fixture) listen(network, addr, reply string) (net.Listener, error) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s %s: %w", network, addr, err)
	}
	if network == "unix" && !strings.HasPrefix(addr, "@") {
		os.Chmod(addr, 0o777)
	}
	f.closers = append(f.closers, func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.accepted.Add(1)
			c.Write([]byte(reply + "\n"))
			c.Close()
		}
	}()
	return l, nil
}

// plantRootSecret leaves a secret in /root (root only); @ROOTSECRET@ names it.
func (f *fixture) plantRootSecret() error {
	if os.Geteuid() != 0 {
		return skipError("planting a secret in /root needs root")
	}
	p := filepath.Join("/root", ".sparrow-escape-root-"+randomHex(4))
	if err := os.WriteFile(p, []byte(f.marker+"-root\n"), 0o600); err != nil {
		return err
	}
	f.vars["ROOTSECRET"] = p
	f.closers = append(f.closers, func() { os.Remove(p) })
	return nil
}

// snapshot is the host state an attack must not change.
type snapshot struct {
	// outside is every file of the fixture outside the workspace (home,
	// out, other), path → type, mode, size and content hash.
	outside map[string]string
	// protected is every path in the workspace with a denied component.
	protected map[string]string
	hooksPath string
}

func (f *fixture) snapshot() (snapshot, error) {
	s := snapshot{outside: map[string]string{}, protected: map[string]string{}}
	skip := map[string]bool{f.ws: true, f.extra: true}
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip[p] {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(f.dir, p)
		s.outside[rel] = describe(p)
		return nil
	})
	if err != nil {
		return s, err
	}
	err = filepath.WalkDir(f.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(f.ws, p)
		if hasDeniedComponent(rel) {
			s.protected[rel] = describe(p)
		}
		return nil
	})
	if err != nil {
		return s, err
	}
	s.hooksPath, _ = f.git("config", "--get", "core.hooksPath")
	s.hooksPath = strings.TrimSpace(s.hooksPath)
	return s, nil
}

func hasDeniedComponent(rel string) bool {
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		for _, d := range deniedNames {
			if c == d {
				return true
			}
		}
	}
	return false
}

// describe is a path's type, permissions, size and content hash (or link
// target), enough to see any change.
func describe(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "missing"
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		return "symlink → " + target
	case fi.IsDir():
		return fmt.Sprintf("dir %v", fi.Mode().Perm())
	case fi.Mode().IsRegular():
		b, _ := os.ReadFile(p)
		sum := sha256.Sum256(b)
		st, _ := fi.Sys().(*syscall.Stat_t)
		links := uint64(1)
		if st != nil {
			links = uint64(st.Nlink)
		}
		return fmt.Sprintf("file %v %d bytes %d links sha256:%s", fi.Mode().Perm(), fi.Size(), links, hex.EncodeToString(sum[:8]))
	}
	return fi.Mode().String()
}

// diffSnapshots lists what was added, removed or changed under what.
func diffSnapshots(what string, before, after map[string]string) []string {
	var v []string
	for _, k := range sortedKeys(after) {
		if b, ok := before[k]; !ok {
			v = append(v, fmt.Sprintf("%s: %s appeared (%s)", what, k, after[k]))
		} else if b != after[k] {
			v = append(v, fmt.Sprintf("%s: %s changed (%s → %s)", what, k, b, after[k]))
		}
	}
	for _, k := range sortedKeys(before) {
		if _, ok := after[k]; !ok {
			v = append(v, fmt.Sprintf("%s: %s disappeared", what, k))
		}
	}
	if len(v) > 12 {
		v = append(v[:12], fmt.Sprintf("%s: … and %d more changes", what, len(v)-12))
	}
	return v
}

// syscallNumbers are the raw syscall numbers the perl attacks use.
func syscallNumbers() map[string]string {
	if runtime.GOARCH == "arm64" {
		return map[string]string{"SYS_PTRACE": "117", "SYS_KEYCTL": "219", "SYS_ADD_KEY": "217"}
	}
	return map[string]string{"SYS_PTRACE": "101", "SYS_KEYCTL": "250", "SYS_ADD_KEY": "248"}
}

// unmount detaches whatever an attack mounted on the host.
func unmount(p string) { syscall.Unmount(p, syscall.MNT_DETACH) }

func randInt(n int) int {
	v, _ := strconv.ParseUint(randomHex(4), 16, 32)
	return int(v % uint64(n))
}
