package config

import (
	"encoding/base64"
	"encoding/hex"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// constraintClause is one comparison in a version constraint: an optional
// operator and a version of one to three numeric parts, with an optional
// pre-release or build suffix.
var constraintClause = regexp.MustCompile(`^(=|!=|>=|<=|>|<|~>|\^|~)?\s*v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validConstraint accepts comma-separated comparisons such as
// ">= 1.2.0, < 2" or "~> 1.4".
func validConstraint(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	for _, clause := range strings.Split(s, ",") {
		if !constraintClause.MatchString(strings.TrimSpace(clause)) {
			return false
		}
	}
	return true
}

func validSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}

func validEnvName(s string) bool { return envName.MatchString(s) }

// validGlob reports whether p is a well-formed path glob; "**" is allowed.
func validGlob(p string) bool {
	if p == "" {
		return false
	}
	_, err := path.Match(p, "")
	return err == nil
}

// validKey accepts "ed25519:" followed by the standard base64 of a 32-byte
// public key.
func validKey(s string) bool {
	rest, ok := strings.CutPrefix(s, "ed25519:")
	if !ok {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	return err == nil && len(b) == 32
}

func isAbsOrHome(p string) bool {
	return filepath.IsAbs(p) || strings.HasPrefix(p, "~/")
}
