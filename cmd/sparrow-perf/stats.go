package main

import (
	"fmt"
	"slices"
)

// sample is a list of measurements of one figure.
type sample []float64

func (s sample) sorted() []float64 { c := slices.Clone(s); slices.Sort(c); return c }

// median of the sample; 0 when empty.
func (s sample) median() float64 {
	c := s.sorted()
	if len(c) == 0 {
		return 0
	}
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// quantile q (0..1) by nearest rank.
func (s sample) quantile(q float64) float64 {
	c := s.sorted()
	if len(c) == 0 {
		return 0
	}
	i := int(q*float64(len(c)-1) + 0.5)
	return c[i]
}

// spread is "median (min–max)" with the given precision.
func (s sample) spread(prec int) string {
	if len(s) == 0 {
		return "—"
	}
	c := s.sorted()
	if len(c) == 1 {
		return fmt.Sprintf("%.*f", prec, c[0])
	}
	return fmt.Sprintf("%.*f (%.*f–%.*f)", prec, s.median(), prec, c[0], prec, c[len(c)-1])
}
