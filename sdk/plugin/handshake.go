package plugin

import (
	"fmt"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/sparrow-cli/sparrow/sdk"
)

// Kind is what a plugin provides.
type Kind string

// The plugin kinds. Their string values are the names used in manifests and
// as go-plugin plugin-set keys.
const (
	KindProvider Kind = "provider"
	KindTool     Kind = "tool"
	KindSandbox  Kind = "sandbox"
	KindSurface  Kind = "surface"
)

// Kinds lists every plugin kind, in a stable order.
var Kinds = []Kind{KindProvider, KindTool, KindSandbox, KindSurface}

// ParseKind returns the Kind named s, or an error listing the valid kinds.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown plugin kind %q (want one of provider, tool, sandbox, surface)", s)
}

// MagicCookieKey and MagicCookieValue tell a plugin binary it was started by
// Sparrow. They are a usability guard, not a security measure.
const (
	MagicCookieKey   = "SPARROW_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "7d0f5c0e-sparrow-one-cli-grows-with-you"
)

// Handshake is the go-plugin handshake both sides use. Its ProtocolVersion is
// sdk.ProtocolVersion; go-plugin negotiates versions through VersionedPlugins.
func Handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{
		ProtocolVersion:  sdk.ProtocolVersion,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}
