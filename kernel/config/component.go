package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Attribute types an [AttrSpec] may declare.
const (
	TypeString     = "string"
	TypeNumber     = "number"
	TypeBool       = "bool"
	TypeListString = "list(string)"
	TypeMapString  = "map(string)"
	TypeDuration   = "duration"
)

// AttrSpec declares one plugin-specific attribute of a provider, sandbox,
// tool or surface block. The kernel converts the schema a plugin declares
// through the SDK into AttrSpecs.
type AttrSpec struct {
	// Name is the attribute name.
	Name string
	// Type is one of the Type* constants. Decoded values are string,
	// float64, bool, []string, map[string]string and time.Duration.
	Type string
	// Required attributes must be set by some layer unless Default is set.
	Required bool
	// Default is used when no layer sets the attribute; it must already
	// have the Go type that Type decodes to.
	Default any
	// Sensitive values (API keys, tokens) are never printed.
	Sensitive bool
}

// DecodeComponent decodes the plugin-specific bodies of one component,
// earliest layer first, against the plugin's schema. Later layers
// override earlier ones per attribute. env("NAME") in the bodies is
// evaluated with getenv (nil is an empty environment).
//
// Every problem is reported: attributes the schema does not declare (with
// the nearest declared name as a hint), values of the wrong type or
// malformed durations (at the value's file:line:col), and required
// attributes no layer sets.
func DecodeComponent(bodies []hcl.Body, schema []AttrSpec, getenv func(string) string) (map[string]any, hcl.Diagnostics) {
	specs, diags := indexSchema(schema)
	if diags.HasErrors() {
		return nil, diags
	}
	d := &decoder{ctx: evalContext(orEmptyEnv(getenv)), diags: diags}
	out := map[string]any{}
	failed := map[string]bool{} // attributes whose value was reported bad
	var last hcl.Body
	for _, body := range bodies {
		if body == nil {
			continue
		}
		last = body
		attrs, diags := body.JustAttributes()
		d.diags = append(d.diags, diags...)
		for _, attr := range sortedAttrs(attrs) {
			spec, ok := specs[attr.Name]
			if !ok {
				d.errorf(attr.NameRange, "Unsupported argument",
					"An argument named %q is not expected here.%s", attr.Name, didYouMean(attr.Name, specNames(schema)))
				continue
			}
			n := len(d.diags)
			if v, ok := decodeSpec(d, attr, spec); ok {
				out[attr.Name] = v
			} else if len(d.diags) > n {
				failed[attr.Name] = true
			}
		}
	}
	for _, spec := range schema {
		if _, ok := out[spec.Name]; ok {
			continue
		}
		switch {
		case spec.Default != nil:
			out[spec.Name] = spec.Default
		case spec.Required && !failed[spec.Name]:
			diag := &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Missing required argument",
				Detail:   fmt.Sprintf("The argument %q is required, but no definition was found.", spec.Name),
			}
			if last != nil {
				diag.Subject = last.MissingItemRange().Ptr()
			}
			d.diags = append(d.diags, diag)
		}
	}
	return out, d.diags
}

// indexSchema checks a schema and indexes it by name.
func indexSchema(schema []AttrSpec) (map[string]AttrSpec, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	specs := make(map[string]AttrSpec, len(schema))
	valid := []string{TypeString, TypeNumber, TypeBool, TypeListString, TypeMapString, TypeDuration}
	for _, s := range schema {
		problem := ""
		switch {
		case !slices.Contains(valid, s.Type):
			problem = fmt.Sprintf("attribute %q has unknown type %q", s.Name, s.Type)
		case specs[s.Name].Name != "":
			problem = fmt.Sprintf("attribute %q is declared twice", s.Name)
		}
		if problem != "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid plugin schema",
				Detail:   "plugin schema: " + problem + ".",
			})
			continue
		}
		specs[s.Name] = s
	}
	return specs, diags
}

// decodeSpec decodes one attribute to the Go type of its spec.
func decodeSpec(d *decoder, attr *hcl.Attribute, spec AttrSpec) (any, bool) {
	one := hcl.Attributes{attr.Name: attr}
	switch spec.Type {
	case TypeString:
		v := d.str(one, attr.Name)
		return v.V, v.Set
	case TypeNumber:
		v, ok := d.eval(attr, cty.Number)
		if !ok {
			return nil, false
		}
		f, _ := v.AsBigFloat().Float64()
		return f, true
	case TypeBool:
		v := d.boolean(one, attr.Name)
		return v.V, v.Set
	case TypeListString:
		v := d.strList(one, attr.Name)
		return v.V, v.Set
	case TypeMapString:
		return decodeStringMap(d, attr)
	default: // TypeDuration
		v := d.str(one, attr.Name)
		if !v.Set {
			return nil, false
		}
		dur, err := time.ParseDuration(v.V)
		if err != nil {
			d.errorf(attr.Expr.Range(), "Invalid duration",
				"%q is not a duration; write something like \"30s\", \"5m\" or \"1h30m\".", v.V)
			return nil, false
		}
		return dur, true
	}
}

func decodeStringMap(d *decoder, attr *hcl.Attribute) (any, bool) {
	v, ok := d.eval(attr, cty.Map(cty.String))
	if !ok {
		return nil, false
	}
	out := make(map[string]string, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.IsNull() {
			d.errorf(attr.Expr.Range(), "Invalid value", "%q must not contain null (key %q).", attr.Name, k.AsString())
			return nil, false
		}
		out[k.AsString()] = e.AsString()
	}
	return out, true
}

func specNames(schema []AttrSpec) []string {
	names := make([]string, len(schema))
	for i, s := range schema {
		names[i] = s.Name
	}
	return names
}

// sortedAttrs orders attributes by source position, so diagnostics come
// out in a stable order.
func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *hcl.Attribute) int { return a.Range.Start.Byte - b.Range.Start.Byte })
	return out
}
