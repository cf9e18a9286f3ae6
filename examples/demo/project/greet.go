// Package greet greets sailors.
package greet

// Greet returns the greeting for name.
func Greet(name string) string {
	return "Hello, " + name
}
