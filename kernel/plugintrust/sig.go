package plugintrust

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
)

// SigSuffix names a detached signature file: X.sig signs X.
const SigSuffix = ".sig"

// Sign returns the signature file for data.
func Sign(k PrivateKey, data []byte) []byte {
	sig := ed25519.Sign(k.k, data)
	return []byte(k.Public().String() + " " + base64.StdEncoding.EncodeToString(sig) + "\n")
}

// UntrustedKeyError says a valid signature is by a key the verifier does
// not trust.
type UntrustedKeyError struct {
	What string
	Key  PublicKey
}

func (e *UntrustedKeyError) Error() string {
	return fmt.Sprintf("%s is signed by key %s (fingerprint %s), which is not trusted; add it to policy.trusted_keys, or pass --trust-key %s if you know whose it is",
		e.What, e.Key, e.Key.Fingerprint(), e.Key)
}

// BadSignatureError says a signature does not match what it claims to
// sign: the file or the signature was altered.
type BadSignatureError struct{ What string }

func (e *BadSignatureError) Error() string {
	return fmt.Sprintf("%s does not match its signature: it was altered after signing, or the signature belongs to another file", e.What)
}

// Verify checks sigFile over data and returns the signing key, which must
// be in ring. what names the signed file in errors.
func Verify(ring KeyRing, what string, data, sigFile []byte) (PublicKey, error) {
	key, sig, err := parseSig(what, sigFile)
	if err != nil {
		return PublicKey{}, err
	}
	if !ed25519.Verify(key.k, data, sig) {
		return PublicKey{}, &BadSignatureError{What: what}
	}
	if !ring.Trusts(key) {
		return key, &UntrustedKeyError{What: what, Key: key}
	}
	return key, nil
}

func parseSig(what string, sigFile []byte) (PublicKey, []byte, error) {
	fields := strings.Fields(string(sigFile))
	if len(fields) != 2 {
		return PublicKey{}, nil, fmt.Errorf("%s%s: want one line \"ed25519:<key> <signature>\"", what, SigSuffix)
	}
	key, err := ParsePublicKey(fields[0])
	if err != nil {
		return PublicKey{}, nil, fmt.Errorf("%s%s: %w", what, SigSuffix, err)
	}
	sig, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return PublicKey{}, nil, fmt.Errorf("%s%s: the signature is not %d base64-encoded bytes", what, SigSuffix, ed25519.SignatureSize)
	}
	return key, sig, nil
}
