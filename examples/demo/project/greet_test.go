package greet

import "testing"

func TestGreet(t *testing.T) {
	if got, want := Greet("Ada"), "Ahoy, Ada!"; got != want {
		t.Fatalf("Greet(%q) = %q, want %q", "Ada", got, want)
	}
}
