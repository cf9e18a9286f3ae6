package plugintrust

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	publicPrefix  = "ed25519:"
	privatePrefix = "ed25519-private:"
)

// PublicKey is an ed25519 public key, built only by ParsePublicKey or
// from a PrivateKey.
type PublicKey struct{ k ed25519.PublicKey }

// ParsePublicKey reads "ed25519:<base64>".
func ParsePublicKey(s string) (PublicKey, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(s), publicPrefix)
	if !ok {
		return PublicKey{}, fmt.Errorf("public key %q: want ed25519:<base64>", clip(s))
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return PublicKey{}, fmt.Errorf("public key %q: not %d base64-encoded bytes", clip(s), ed25519.PublicKeySize)
	}
	return PublicKey{ed25519.PublicKey(raw)}, nil
}

// String is the key as config and lock files write it.
func (p PublicKey) String() string {
	return publicPrefix + base64.StdEncoding.EncodeToString(p.k)
}

// Fingerprint is the first 16 bytes of SHA-256 over the key, in hex.
func (p PublicKey) Fingerprint() string {
	sum := sha256.Sum256(p.k)
	return hex.EncodeToString(sum[:16])
}

// Equal reports whether two keys are the same.
func (p PublicKey) Equal(q PublicKey) bool { return p.k.Equal(q.k) }

// IsZero reports whether p holds no key.
func (p PublicKey) IsZero() bool { return len(p.k) == 0 }

// PrivateKey signs releases.
type PrivateKey struct{ k ed25519.PrivateKey }

// GenerateKey makes a new signing key.
func GenerateKey() (PrivateKey, error) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return PrivateKey{}, fmt.Errorf("generate key: %w", err)
	}
	return PrivateKey{k}, nil
}

// Public returns the key's public half.
func (k PrivateKey) Public() PublicKey { return PublicKey{k.k.Public().(ed25519.PublicKey)} }

// WriteKeyFiles writes the private key to path (0600, refusing to
// overwrite) and the public key to path+".pub".
func WriteKeyFiles(path string, k PrivateKey) error {
	body := fmt.Sprintf("# Sparrow plugin signing key. Keep it secret; publish %s.pub.\n# public key: %s\n# fingerprint: %s\n%s%s\n",
		filepath.Base(path), k.Public(), k.Public().Fingerprint(), privatePrefix, base64.StdEncoding.EncodeToString(k.k.Seed()))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write signing key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write signing key: %w", err)
	}
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return fmt.Errorf("write signing key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write signing key %s: %w", path, err)
	}
	return WriteFileAtomic(path+".pub", []byte(k.Public().String()+"\n"), 0o644)
}

// ReadPrivateKey reads a key file written by WriteKeyFiles.
func ReadPrivateKey(path string) (PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return PrivateKey{}, fmt.Errorf("read signing key: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b64, ok := strings.CutPrefix(line, privatePrefix)
		seed, err := base64.StdEncoding.DecodeString(b64)
		if !ok || err != nil || len(seed) != ed25519.SeedSize {
			return PrivateKey{}, fmt.Errorf("%s:%d: not a signing key (want %s<base64 seed>)", path, n, privatePrefix)
		}
		return PrivateKey{ed25519.NewKeyFromSeed(seed)}, nil
	}
	return PrivateKey{}, fmt.Errorf("%s: no signing key in the file", path)
}

// KeyRing is the set of keys a verifier trusts.
type KeyRing []PublicKey

// ParseKeyRing parses keys as config writes them.
func ParseKeyRing(keys []string) (KeyRing, error) {
	var r KeyRing
	var errs []error
	for _, s := range keys {
		k, err := ParsePublicKey(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r = append(r, k)
	}
	return r, errors.Join(errs...)
}

// Trusts reports whether k is in the ring.
func (r KeyRing) Trusts(k PublicKey) bool {
	for _, t := range r {
		if t.Equal(k) {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
