// Package plugin holds what every Sparrow plugin kind shares: the go-plugin
// handshake, the base contract (info, config schema, configure), and the
// serve loop that keeps a plugin from outliving the kernel.
//
// Plugin authors rarely import it directly: the kind packages (provider,
// tool, sandbox, surface) wrap it in a one-line Serve.
package plugin
