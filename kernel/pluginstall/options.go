package pluginstall

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"

	"github.com/Masterminds/semver/v3"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
	"github.com/sparrow-cli/sparrow/sdk"
)

// Files an install leaves beside a plugin: the signed release manifest it
// was verified against, verbatim, and its signature.
const (
	ReleaseFile    = ".sparrow-release.json"
	ReleaseSigFile = ReleaseFile + plugintrust.SigSuffix
)

// Options say where plugins go, where they come from and whom to trust.
type Options struct {
	// DataDir is Sparrow's data directory; plugins are installed in
	// DataDir/plugins/<name>/<version>. Required.
	DataDir string
	// LockFile is the path of sparrow.lock.hcl. Required.
	LockFile string
	// Sources are the mirrors, tried in order. Install needs at least
	// one; InstallLocked and Upgrade fall back to the source recorded in
	// the lock file.
	Sources []Source
	// TrustedKeys are the publisher keys the user trusts
	// (policy.trusted_keys).
	TrustedKeys plugintrust.KeyRing
	// TrustKey, when set, is trusted for this call only (--trust-key).
	TrustKey plugintrust.PublicKey
	// AcceptNewKey, when set, lets a release signed by this key replace
	// one the lock file records with another key (--accept-new-key). The
	// key must still be trusted.
	AcceptNewKey plugintrust.PublicKey
	// Platform is "os/arch" of this machine; default runtime.GOOS/GOARCH.
	// A "wasm" build fits any platform.
	Platform string
	// SDKVersion is the SDK version this Sparrow speaks; default
	// sdk.Version.
	SDKVersion string
	// Protocol is the plugin protocol this Sparrow speaks; default
	// sdk.ProtocolVersion.
	Protocol int

	// seams lets tests lower the caps and inject failures.
	seams seams
}

// seams are test hooks; their zero value is production behaviour.
type seams struct {
	limits limits
	// wrapWriter wraps every file written while staging (disk full).
	wrapWriter func(file string, w io.Writer) io.Writer
	// step runs before each commit step ("rename", "lock", "remove");
	// an error aborts the operation there.
	step func(step string) error
	// noExchange makes replace use two renames, as on systems without
	// an atomic exchange.
	noExchange bool
}

// limits caps what one install may download and unpack.
type limits struct {
	meta     int64 // index, manifest, SHA256SUMS and signatures, each
	archive  int64 // one archive
	unpacked int64 // all files of an archive, uncompressed
	entries  int   // entries of an archive
}

// Default caps: metadata files 4 MiB each, archives 512 MiB, 1 GiB and
// 10,000 entries unpacked.
const (
	maxMetaBytes     = 4 << 20
	maxArchiveBytes  = 512 << 20
	maxUnpackedBytes = 1 << 30
	maxEntries       = 10_000
)

func (l limits) withDefaults() limits {
	orDefault := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	orDefault(&l.meta, maxMetaBytes)
	orDefault(&l.archive, maxArchiveBytes)
	orDefault(&l.unpacked, maxUnpackedBytes)
	if l.entries <= 0 {
		l.entries = maxEntries
	}
	return l
}

// Result says what one install, upgrade or removal did.
type Result struct {
	Name string
	// Old is the version the lock file recorded before, "" if none.
	Old string
	// New is the version now installed, "" after a removal.
	New string
	// Fingerprint is the fingerprint of the release's signer.
	Fingerprint string
	// Source is the mirror the release came from.
	Source string
	// KeyAccepted says the signer was accepted by this call: trusted only
	// through Options.TrustKey, or replacing the lock's signer through
	// Options.AcceptNewKey.
	KeyAccepted bool
	// Unchanged says nothing was done: the plugin was installed and
	// intact already, or already at the newest fitting version.
	Unchanged bool
	// Warnings are problems after the point of no return, such as an
	// older version directory that could not be removed.
	Warnings []string
}

// target is what a release must fit.
type target struct {
	platform string
	sdk      *semver.Version
	protocol int
}

// prepare fills in defaults and checks the options.
func (o Options) prepare() (Options, target, error) {
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, errors.New("no data directory (Options.DataDir)"))
	}
	if o.LockFile == "" {
		errs = append(errs, errors.New("no lock file (Options.LockFile)"))
	}
	if o.Platform == "" {
		o.Platform = runtime.GOOS + "/" + runtime.GOARCH
	}
	if o.SDKVersion == "" {
		o.SDKVersion = sdk.Version
	}
	if o.Protocol == 0 {
		o.Protocol = sdk.ProtocolVersion
	}
	v, err := semver.StrictNewVersion(o.SDKVersion)
	if err != nil {
		errs = append(errs, fmt.Errorf("SDK version %q: %v", o.SDKVersion, err))
	}
	o.seams.limits = o.seams.limits.withDefaults()
	if err := errors.Join(errs...); err != nil {
		return o, target{}, fmt.Errorf("plugin install options: %w", err)
	}
	return o, target{platform: o.Platform, sdk: v, protocol: o.Protocol}, nil
}

// ring is the keys trusted for this call.
func (o Options) ring() plugintrust.KeyRing {
	ring := append(plugintrust.KeyRing(nil), o.TrustedKeys...)
	if !o.TrustKey.IsZero() {
		ring = append(ring, o.TrustKey)
	}
	return ring
}

func (o Options) pluginsDir() string { return filepath.Join(o.DataDir, "plugins") }

func (o Options) step(name string) error {
	if o.seams.step == nil {
		return nil
	}
	return o.seams.step(name)
}

func (o Options) wrap(file string, w io.Writer) io.Writer {
	if o.seams.wrapWriter == nil {
		return w
	}
	return o.seams.wrapWriter(file, w)
}
