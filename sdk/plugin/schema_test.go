package plugin_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

func TestSchemaRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		in   plugin.Schema
		// want is what arrives; nil means the schema arrives unchanged.
		// JSON has one number type, so integer defaults arrive as float64.
		want *plugin.Schema
	}{
		{name: "empty", in: plugin.Schema{}},
		{name: "flags and descriptions", in: plugin.Schema{Attributes: []plugin.Attribute{
			{Name: "base_url", Type: plugin.String, Required: true, Description: "where the API lives"},
			{Name: "api_key", Type: plugin.String, Sensitive: true, Description: "sent as a bearer token"},
		}}},
		{name: "every type with a default", in: plugin.Schema{Attributes: []plugin.Attribute{
			{Name: "region", Type: plugin.String, Default: "eu-west-1"},
			{Name: "retries", Type: plugin.Number, Default: 2.5},
			{Name: "stream", Type: plugin.Bool, Default: true},
			{Name: "mounts", Type: plugin.ListOfString, Default: []any{"/data", "/cache"}},
			{Name: "headers", Type: plugin.MapOfString, Default: map[string]any{"X-A": "b"}},
			{Name: "timeout", Type: plugin.Duration, Default: "30s"},
		}}},
		{name: "zero values are defaults too", in: plugin.Schema{Attributes: []plugin.Attribute{
			{Name: "prefix", Type: plugin.String, Default: ""},
			{Name: "verbose", Type: plugin.Bool, Default: false},
			{Name: "mounts", Type: plugin.ListOfString, Default: []any{}},
		}}},
		{
			name: "integers arrive as float64",
			in: plugin.Schema{Attributes: []plugin.Attribute{
				{Name: "retries", Type: plugin.Number, Default: 3},
				{Name: "mounts", Type: plugin.ListOfString, Default: []string{"/a"}},
				{Name: "headers", Type: plugin.MapOfString, Default: map[string]string{"k": "v"}},
			}},
			want: &plugin.Schema{Attributes: []plugin.Attribute{
				{Name: "retries", Type: plugin.Number, Default: float64(3)},
				{Name: "mounts", Type: plugin.ListOfString, Default: []any{"/a"}},
				{Name: "headers", Type: plugin.MapOfString, Default: map[string]any{"k": "v"}},
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plugin.SchemaToProto(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := plugin.SchemaFromProto(p)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.in
			if tc.want != nil {
				want = *tc.want
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

func TestSchemaToProtoRejects(t *testing.T) {
	cases := []struct {
		name string
		attr plugin.Attribute
		want string
	}{
		{"no type", plugin.Attribute{Name: "a"}, `attribute "a": unknown type 0`},
		{"unknown type", plugin.Attribute{Name: "a", Type: 99}, `attribute "a": unknown type 99`},
		{"default not encodable", plugin.Attribute{Name: "a", Type: plugin.String, Default: func() {}}, `attribute "a": encode default`},
		{"default infinite", plugin.Attribute{Name: "a", Type: plugin.Number, Default: math.Inf(1)}, `attribute "a": encode default`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plugin.SchemaToProto(plugin.Schema{Attributes: []plugin.Attribute{tc.attr}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSchemaFromProtoRejects(t *testing.T) {
	attr := func(name string, ty pb.AttributeType, def string) *pb.ConfigAttribute {
		return &pb.ConfigAttribute{Name: name, Type: ty, DefaultJson: def}
	}
	str := pb.AttributeType_ATTRIBUTE_TYPE_STRING
	cases := []struct {
		name  string
		attrs []*pb.ConfigAttribute
		want  string
	}{
		{"nameless", []*pb.ConfigAttribute{attr("", str, "")}, "attribute 0 has no name"},
		{"nameless second", []*pb.ConfigAttribute{attr("a", str, ""), attr("", str, "")}, "attribute 1 has no name"},
		{"duplicate", []*pb.ConfigAttribute{attr("a", str, ""), attr("a", pb.AttributeType_ATTRIBUTE_TYPE_BOOL, "")}, `attribute "a" declared twice`},
		{"unspecified type", []*pb.ConfigAttribute{attr("a", pb.AttributeType_ATTRIBUTE_TYPE_UNSPECIFIED, "")}, `attribute "a": unknown type`},
		{"type from the future", []*pb.ConfigAttribute{attr("a", pb.AttributeType(42), "")}, `attribute "a": unknown type`},
		{"default not JSON", []*pb.ConfigAttribute{attr("a", pb.AttributeType_ATTRIBUTE_TYPE_NUMBER, "{nope")}, `attribute "a": default is not JSON`},
		{"default unquoted string", []*pb.ConfigAttribute{attr("a", str, "eu-west-1")}, `attribute "a": default is not JSON`},
		{"default truncated", []*pb.ConfigAttribute{attr("a", pb.AttributeType_ATTRIBUTE_TYPE_LIST_OF_STRING, `["x"`)}, `attribute "a": default is not JSON`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plugin.SchemaFromProto(&pb.ConfigSchema{Attributes: tc.attrs})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSchemaFromNilProto(t *testing.T) {
	got, err := plugin.SchemaFromProto(nil)
	if err != nil || len(got.Attributes) != 0 {
		t.Fatalf("nil schema = %+v, %v; want empty", got, err)
	}
}

func TestAttributeTypeNames(t *testing.T) {
	want := map[plugin.AttributeType]string{
		plugin.String: "string", plugin.Number: "number", plugin.Bool: "bool",
		plugin.ListOfString: "list(string)", plugin.MapOfString: "map(string)", plugin.Duration: "duration",
		0: "unknown", 99: "unknown",
	}
	got := map[plugin.AttributeType]string{}
	for ty := range want {
		got[ty] = ty.String()
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("type names (-want +got):\n%s", d)
	}
}
