package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/sparrow-cli/sparrow/kernel/pluginpkg"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// The publisher's verbs: keygen, package, sign (docs/publishing-plugins.md).

const defaultKeyFile = "sparrow-signing-key"

func (a *app) pluginKeygenCmd() *command {
	out := defaultKeyFile
	c := &command{app: a, synopsis: "Make a signing key for publishing plugins", usage: "sparrow plugin keygen [--out FILE]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&out, "out", defaultKeyFile, "write the private key to FILE (0600) and the public key to FILE.pub")
		}}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		for _, p := range []string{out, out + ".pub"} {
			if _, err := os.Lstat(p); err == nil {
				fmt.Fprintf(a.env.Stderr, "sparrow: %s already exists; a signing key is never overwritten (users trust it). Pick another --out.\n", p)
				return ExitError
			}
		}
		key, err := plugintrust.GenerateKey()
		if err == nil {
			err = plugintrust.WriteKeyFiles(out, key)
		}
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
			return ExitError
		}
		pub := key.Public()
		fmt.Fprintf(a.env.Stdout, "Signing key forged: %s (secret, mode 0600) and %s.pub.\n", out, out)
		fmt.Fprintf(a.env.Stdout, "public key:  %s\nfingerprint: %s\n", pub, pub.Fingerprint())
		fmt.Fprintf(a.env.Stdout, "Users trust it in policy.trusted_keys, or per install: sparrow plugin install NAME --mirror URL --trust-key %s\n", pub)
		fmt.Fprintln(a.env.Stdout, "Keep the secret half below deck: not in git, not in the mirror.")
		return ExitOK
	}
	return c
}

func (a *app) pluginPackageCmd() *command {
	var mirror, keyFile string
	var force bool
	c := &command{app: a, synopsis: "Package a built plugin into a mirror: archives, manifest, SHA256SUMS, indexes",
		usage: "sparrow plugin package DIR --mirror OUT [--key KEYFILE] [--force]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&mirror, "mirror", "", "the mirror directory to publish into (created if missing)")
			fs.StringVar(&keyFile, "key", "", "sign the release with this key file (sparrow plugin keygen)")
			fs.BoolVar(&force, "force", false, "replace a version already in the mirror with different content")
		}}
	c.run = func(args []string) int {
		switch {
		case len(args) != 1:
			return a.usageError(c.usage, "want one plugin directory")
		case mirror == "":
			return a.usageError(c.usage, "--mirror is required")
		}
		opts := pluginpkg.Options{Force: force}
		if keyFile != "" {
			key, err := plugintrust.ReadPrivateKey(keyFile)
			if err != nil {
				fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
				return ExitError
			}
			opts.Key = &key
		}
		res, err := pluginpkg.Package(args[0], mirror, opts)
		if err != nil {
			return a.publishFail(err)
		}
		r := res.Release
		switch {
		case res.Unchanged:
			fmt.Fprintf(a.env.Stdout, "%s %s is already in %s, byte for byte; nothing to repack.\n", r.Name, r.Version, res.Dir)
		default:
			verb := "Packaged"
			if res.Replaced {
				verb = "Replaced"
			}
			fmt.Fprintf(a.env.Stdout, "%s %s %s (%s, %s) for %s into %s:\n", verb, r.Name, r.Version, r.Kind, r.Runtime, strings.Join(r.PlatformNames(), ", "), res.Dir)
			a.listFiles(res.Dir, res.Files)
		}
		if res.Signer != nil {
			fmt.Fprintf(a.env.Stdout, "Signed with key %s.\n", res.Signer.Fingerprint())
		} else if !res.Unchanged {
			fmt.Fprintf(a.env.Stdout, "Unsigned: sparrow plugin sign --key KEYFILE %s\n", res.Dir)
		}
		fmt.Fprintf(a.env.Stdout, "Indexed in %s. Serve the mirror as static files and set sail.\n", filepath.Join(mirror, pluginpkg.IndexFile))
		return ExitOK
	}
	return c
}

func (a *app) pluginSignCmd() *command {
	var keyFile string
	c := &command{app: a, synopsis: "Sign a packaged release: its manifest and SHA256SUMS",
		usage: "sparrow plugin sign --key KEYFILE VERSION-DIR",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&keyFile, "key", "", "the signing key file (sparrow plugin keygen)")
		}}
	c.run = func(args []string) int {
		switch {
		case len(args) != 1:
			return a.usageError(c.usage, "want one version directory (MIRROR/NAME/VERSION)")
		case keyFile == "":
			return a.usageError(c.usage, "--key is required")
		}
		key, err := plugintrust.ReadPrivateKey(keyFile)
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
			return ExitError
		}
		r, err := pluginpkg.Sign(args[0], key)
		if err != nil {
			return a.publishFail(err)
		}
		m := plugintrust.ManifestName(r.Name, r.Version)
		s := plugintrust.SumsName(r.Name, r.Version)
		fmt.Fprintf(a.env.Stdout, "Signed %s %s with key %s: %s%s, %s%s\n", r.Name, r.Version, key.Public().Fingerprint(),
			m, plugintrust.SigSuffix, s, plugintrust.SigSuffix)
		return ExitOK
	}
	return c
}

// publishFail prints a packaging or signing error: plugin.hcl problems as
// diagnostics (exit 3), anything else as one message (exit 1).
func (a *app) publishFail(err error) int {
	var me *pluginpkg.ManifestError
	if errors.As(err, &me) {
		a.printDiagnostics(me.Diags)
		return ExitConfig
	}
	fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
	var pe *pluginpkg.PublishedError
	if errors.As(err, &pe) {
		fmt.Fprintln(a.env.Stderr, "If nobody has installed it yet, --force replaces it.")
	}
	return ExitError
}

// listFiles prints each file of a version directory with its size.
func (a *app) listFiles(dir string, names []string) {
	w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
	for _, n := range names {
		size := ""
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil {
			size = humanSize(fi.Size())
		}
		fmt.Fprintf(w, "  %s\t%s\n", n, size)
	}
	w.Flush()
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
