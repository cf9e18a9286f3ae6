// Package sdk is the only module a Sparrow plugin imports.
//
// Plugin authors use the package of their kind (provider, tool, sandbox,
// surface), implement its small interface and call its Serve function from
// main. Everything about go-plugin and gRPC stays inside the SDK.
package sdk
