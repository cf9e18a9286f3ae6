package pluginhost

import (
	"fmt"
	"strings"
)

// Error is a plugin failure, named by plugin, with the plugin's last stderr
// lines when it died.
type Error struct {
	Plugin string
	// Op is what the kernel was doing: "start", "sandbox local: exec", ...
	Op     string
	Err    error
	Stderr []string
	// Confined lists what a confined plugin's process was confined to,
	// when that process died or failed to start: a plugin that reached
	// for more than it declared fails, and this says what it lacked.
	Confined string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %s: %s: %v", e.Plugin, e.Op, e.Err)
	if len(e.Stderr) > 0 {
		b.WriteString("\n  last stderr lines:")
		for _, l := range e.Stderr {
			b.WriteString("\n    " + l)
		}
	}
	if e.Confined != "" {
		b.WriteString("\n  confined: " + e.Confined)
		b.WriteString("\n  (a plugin gets more only by declaring it in its manifest's capabilities)")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ProtocolError reports a plugin built for another protocol version.
type ProtocolError struct {
	Plugin string
	Has    int
	Want   int
}

func (e *ProtocolError) Error() string {
	hint := "upgrade the plugin"
	if e.Has > e.Want {
		hint = "upgrade Sparrow, or install an older release of the plugin"
	}
	return fmt.Sprintf("plugin %s speaks protocol %d, this Sparrow needs %d; %s", e.Plugin, e.Has, e.Want, hint)
}

// SDKError reports a plugin whose declared SDK range excludes this
// Sparrow's SDK.
type SDKError struct {
	Plugin     string
	Constraint string
	SDK        string
	// Reported is true when the plugin's own answer, not its manifest,
	// disagreed.
	Reported bool
}

func (e *SDKError) Error() string {
	if e.Reported {
		return fmt.Sprintf("plugin %s reports SDK %s, outside the range %s its manifest declares; the manifest does not describe this binary", e.Plugin, e.SDK, e.Constraint)
	}
	return fmt.Sprintf("plugin %s needs SDK %s, this Sparrow provides SDK %s; install a release of the plugin built for it", e.Plugin, e.Constraint, e.SDK)
}
