package sdk

// Version is the semantic version of this SDK. A plugin's manifest declares
// the range of SDK versions it speaks; the kernel checks it before launch.
const Version = "0.1.0"

// ProtocolVersion is the go-plugin protocol version this SDK speaks. It
// changes only when the wire protocol in proto/sparrow/v1 changes
// incompatibly.
const ProtocolVersion = 1
