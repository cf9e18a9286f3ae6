package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// val is one optional attribute value with the range it was defined at.
type val[T any] struct {
	V     T
	Set   bool
	Range hcl.Range
}

// decoder evaluates attributes into typed values, collecting every
// problem as a diagnostic instead of stopping at the first.
type decoder struct {
	ctx   *hcl.EvalContext
	diags hcl.Diagnostics
}

func newDecoder(getenv func(string) string) *decoder {
	return &decoder{ctx: evalContext(getenv)}
}

// evalContext offers the env("NAME"[, "default"]) function. With a nil
// getenv, env() yields unknown values: the file is checked for structure
// without reading the environment.
func evalContext(getenv func(string) string) *hcl.EvalContext {
	return &hcl.EvalContext{Functions: map[string]function.Function{"env": envFunc(getenv)}}
}

func envFunc(getenv func(string) string) function.Function {
	return function.New(&function.Spec{
		Description: "Returns the value of an environment variable, or the optional default when it is unset or empty.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		VarParam:    &function.Parameter{Name: "default", Type: cty.String},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if len(args) > 2 {
				return cty.NilVal, fmt.Errorf("env takes a name and at most one default, got %d arguments", len(args))
			}
			if getenv == nil {
				return cty.UnknownVal(cty.String), nil
			}
			v := getenv(args[0].AsString())
			if v == "" && len(args) == 2 {
				v = args[1].AsString()
			}
			return cty.StringVal(v), nil
		},
	})
}

func (d *decoder) errorf(rng hcl.Range, summary, format string, args ...any) {
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  rng.Ptr(),
	})
}

// eval evaluates attr and converts it to ty. It reports false when the
// value is unusable (an error was recorded), null or not yet known.
func (d *decoder) eval(attr *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	v, diags := attr.Expr.Value(d.ctx)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() || v.IsNull() {
		return cty.NilVal, false
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"Inappropriate value for %q: %s.", attr.Name, err)
		return cty.NilVal, false
	}
	if !cv.IsWhollyKnown() {
		return cty.NilVal, false
	}
	return cv, true
}

func (d *decoder) str(attrs hcl.Attributes, name string) val[string] {
	attr, ok := attrs[name]
	if !ok {
		return val[string]{}
	}
	v, ok := d.eval(attr, cty.String)
	if !ok {
		return val[string]{}
	}
	return val[string]{V: v.AsString(), Set: true, Range: attr.Range}
}

func (d *decoder) boolean(attrs hcl.Attributes, name string) val[bool] {
	attr, ok := attrs[name]
	if !ok {
		return val[bool]{}
	}
	v, ok := d.eval(attr, cty.Bool)
	if !ok {
		return val[bool]{}
	}
	return val[bool]{V: v.True(), Set: true, Range: attr.Range}
}

// num decodes a number and checks lo <= n <= hi.
func (d *decoder) num(attrs hcl.Attributes, name string, lo, hi float64) val[float64] {
	attr, ok := attrs[name]
	if !ok {
		return val[float64]{}
	}
	v, ok := d.eval(attr, cty.Number)
	if !ok {
		return val[float64]{}
	}
	f, _ := v.AsBigFloat().Float64()
	if f < lo || f > hi {
		d.errorf(attr.Expr.Range(), "Value out of range",
			"%q must be between %v and %v, got %v.", name, lo, hi, f)
		return val[float64]{}
	}
	return val[float64]{V: f, Set: true, Range: attr.Range}
}

// integer decodes a whole number and checks lo <= n <= hi; hint, when not
// empty, is appended to the out-of-range message.
func (d *decoder) integer(attrs hcl.Attributes, name string, lo, hi int, hint string) val[int] {
	attr, ok := attrs[name]
	if !ok {
		return val[int]{}
	}
	v, ok := d.eval(attr, cty.Number)
	if !ok {
		return val[int]{}
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		d.errorf(attr.Expr.Range(), "Invalid value", "%q must be a whole number, got %s.", name, bf.Text('g', -1))
		return val[int]{}
	}
	n, _ := bf.Int64()
	if n < int64(lo) || n > int64(hi) {
		d.errorf(attr.Expr.Range(), "Value out of range",
			"%q must be between %d and %d, got %d.%s", name, lo, hi, n, hint)
		return val[int]{}
	}
	return val[int]{V: int(n), Set: true, Range: attr.Range}
}

func (d *decoder) strList(attrs hcl.Attributes, name string) val[[]string] {
	attr, ok := attrs[name]
	if !ok {
		return val[[]string]{}
	}
	v, ok := d.eval(attr, cty.List(cty.String))
	if !ok {
		return val[[]string]{}
	}
	out := make([]string, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			d.errorf(attr.Expr.Range(), "Invalid value", "%q must not contain null.", name)
			return val[[]string]{}
		}
		out = append(out, e.AsString())
	}
	return val[[]string]{V: out, Set: true, Range: attr.Range}
}

// enum decodes a string that must be one of allowed.
func (d *decoder) enum(attrs hcl.Attributes, name string, allowed []string) val[string] {
	v := d.str(attrs, name)
	if !v.Set {
		return v
	}
	for _, a := range allowed {
		if v.V == a {
			return v
		}
	}
	d.errorf(attrs[name].Expr.Range(), "Invalid value for "+name,
		"%q is not a valid %s.%s Valid values: %s.", v.V, name, didYouMean(v.V, allowed), strings.Join(allowed, ", "))
	return val[string]{}
}

// check records an error at the attribute's value when ok is false.
func (d *decoder) check(ok bool, attrs hcl.Attributes, name, summary, format string, args ...any) bool {
	if !ok {
		d.errorf(attrs[name].Expr.Range(), summary, format, args...)
	}
	return ok
}
