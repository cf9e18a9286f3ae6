//go:build unix

package local

// unavailableReason is empty: Unix has everything this backend needs.
const unavailableReason = ""
