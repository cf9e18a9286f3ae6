package workspace

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// SniffBytes is how much of a file IsBinary looks at.
const SniffBytes = 8 << 10

// IsBinary reports whether b's first SniffBytes hold a NUL byte: such a
// file is not shown to the model as text.
func IsBinary(b []byte) bool {
	if len(b) > SniffBytes {
		b = b[:SniffBytes]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// ValidText makes s valid UTF-8 for the model (and for protobuf and JSON
// strings), replacing invalid bytes with U+FFFD.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
