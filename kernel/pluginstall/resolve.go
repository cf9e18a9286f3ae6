package pluginstall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// Resolved is the version resolution chose.
type Resolved struct {
	// Source is the mirror that has it.
	Source Source
	// Version is its entry in the mirror's index.
	Version IndexVersion
	// Platform is the build that fits this machine: Options.Platform, or
	// "wasm".
	Platform string
}

// Rejection says why one version does not fit.
type Rejection struct {
	Version string
	Reason  string
}

// NoVersionError says no version in a mirror fits, and why for each.
type NoVersionError struct {
	Name       string
	Mirror     string
	Constraint string
	// Rejected lists every version of the index, newest first.
	Rejected []Rejection
	// InConstraint says whether any version satisfied the constraint.
	InConstraint bool
}

func (e *NoVersionError) Error() string {
	if !e.InConstraint {
		have := make([]string, len(e.Rejected))
		for i, r := range e.Rejected {
			have[i] = r.Version
		}
		return fmt.Sprintf("no version of %s at %s matches %q (it has %s)", e.Name, e.Mirror, e.Constraint, strings.Join(have, ", "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no version of %s at %s fits this Sparrow:", e.Name, e.Mirror)
	for _, r := range e.Rejected {
		fmt.Fprintf(&b, "\n  %s: %s", r.Version, r.Reason)
	}
	return b.String()
}

// Resolve reads <name>/index.json from each source in turn and returns
// the highest version that satisfies constraint ("" for any), speaks this
// Sparrow's protocol, accepts its SDK version and has a build for its
// platform. The first mirror with such a version wins; when none has
// one, the error says why for every mirror and version.
func Resolve(ctx context.Context, opts Options, name, constraint string) (*Resolved, error) {
	opts, t, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	return resolve(ctx, opts.Sources, name, constraint, t, opts.seams.limits.meta)
}

func resolve(ctx context.Context, sources []Source, name, constraint string, t target, limit int64) (*Resolved, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c, err := parseConstraint(constraint)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, errors.New("no plugin mirror configured (plugin_mirrors, or --mirror)")
	}
	var errs []error
	for _, src := range sources {
		ix, err := readIndex(ctx, src, name, limit)
		if err == nil {
			var r *Resolved
			if r, err = choose(src, ix, c, constraint, t); err == nil {
				return r, nil
			}
		}
		if ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func parseConstraint(s string) (*semver.Constraints, error) {
	if s == "" {
		s = "*"
	}
	c, err := semver.NewConstraint(s)
	if err != nil {
		return nil, fmt.Errorf("version constraint %q: %v", s, err)
	}
	return c, nil
}

func readIndex(ctx context.Context, src Source, name string, limit int64) (*Index, error) {
	path := name + "/" + IndexFile
	data, err := fetch(ctx, src, path, limit)
	if err != nil {
		return nil, err
	}
	return ParseIndex(src.String()+": "+path, name, data)
}

// choose picks the highest fitting version of an index.
func choose(src Source, ix *Index, c *semver.Constraints, constraint string, t target) (*Resolved, error) {
	type cand struct {
		iv       IndexVersion
		v        *semver.Version
		platform string
	}
	var fits []cand
	noVer := &NoVersionError{Name: ix.Name, Mirror: src.String(), Constraint: constraint}
	for _, iv := range sortVersions(ix.Versions) {
		v, platform, inConstraint, reason := t.check(iv, c, constraint)
		noVer.InConstraint = noVer.InConstraint || inConstraint
		if reason != "" {
			noVer.Rejected = append(noVer.Rejected, Rejection{Version: iv.Version, Reason: reason})
			continue
		}
		fits = append(fits, cand{iv, v, platform})
	}
	if len(fits) == 0 {
		return nil, noVer
	}
	best := fits[0] // sortVersions puts the newest first
	return &Resolved{Source: src, Version: best.iv, Platform: best.platform}, nil
}

// check says whether one version fits, and if not, why.
func (t target) check(iv IndexVersion, c *semver.Constraints, constraint string) (v *semver.Version, platform string, inConstraint bool, reason string) {
	v, err := semver.StrictNewVersion(iv.Version)
	if err != nil {
		return nil, "", false, "not a semantic version"
	}
	if !c.Check(v) {
		if v.Prerelease() != "" && constraint == "" {
			return v, "", false, "a pre-release; name it in the constraint to install it"
		}
		return v, "", false, fmt.Sprintf("outside the constraint %q", constraint)
	}
	platform, reason = t.fits(iv)
	return v, platform, true, reason
}

// fits says which build of a version fits this Sparrow, or why none does:
// the protocol, the SDK range or the platforms.
func (t target) fits(iv IndexVersion) (platform, reason string) {
	if iv.Protocol != t.protocol {
		return "", fmt.Sprintf("speaks plugin protocol %d, this Sparrow speaks %d", iv.Protocol, t.protocol)
	}
	sdkRange, err := semver.NewConstraint(iv.SDK)
	if err != nil {
		return "", fmt.Sprintf("SDK range %q is not a version range", iv.SDK)
	}
	if !sdkRange.Check(t.sdk) {
		return "", fmt.Sprintf("needs SDK %s, this Sparrow speaks %s", iv.SDK, t.sdk.Original())
	}
	switch {
	case slices.Contains(iv.Platforms, t.platform):
		return t.platform, ""
	case slices.Contains(iv.Platforms, plugintrust.PlatformWASM):
		return plugintrust.PlatformWASM, ""
	case len(iv.Platforms) == 0:
		return "", fmt.Sprintf("no build for %s (none listed)", t.platform)
	}
	return "", fmt.Sprintf("no build for %s (has %s)", t.platform, strings.Join(iv.Platforms, ", "))
}

// sortVersions orders versions newest first; unparsable ones go last.
func sortVersions(vs []IndexVersion) []IndexVersion {
	out := slices.Clone(vs)
	slices.SortStableFunc(out, func(a, b IndexVersion) int {
		va, errA := semver.StrictNewVersion(a.Version)
		vb, errB := semver.StrictNewVersion(b.Version)
		switch {
		case errA != nil && errB != nil:
			return strings.Compare(a.Version, b.Version)
		case errA != nil:
			return 1
		case errB != nil:
			return -1
		}
		return vb.Compare(va)
	})
	return out
}
