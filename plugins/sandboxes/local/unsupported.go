//go:build !unix

package local

// unavailableReason says why this backend cannot run here.
const unavailableReason = "the local sandbox needs Unix process groups to kill what a command leaves behind"
