package plugin

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

func TestSchemaRoundTrip(t *testing.T) {
	in := Schema{Attributes: []Attribute{
		{Name: "base_url", Type: String, Required: true, Description: "where the API lives"},
		{Name: "api_key", Type: String, Sensitive: true},
		{Name: "timeout", Type: Duration, Default: "30s"},
		{Name: "retries", Type: Number, Default: float64(3)},
		{Name: "stream", Type: Bool, Default: true},
		{Name: "mounts", Type: ListOfString, Default: []any{"/data"}},
		{Name: "headers", Type: MapOfString, Default: map[string]any{"X-A": "b"}},
	}}
	p, err := SchemaToProto(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := SchemaFromProto(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
}

func TestSchemaFromProtoRejectsGarbage(t *testing.T) {
	attr := func(name string, ty pb.AttributeType, def string) *pb.ConfigAttribute {
		return &pb.ConfigAttribute{Name: name, Type: ty, DefaultJson: def}
	}
	cases := []struct {
		name  string
		attrs []*pb.ConfigAttribute
		want  string
	}{
		{"nameless", []*pb.ConfigAttribute{attr("", pb.AttributeType_ATTRIBUTE_TYPE_STRING, "")}, "has no name"},
		{"duplicate", []*pb.ConfigAttribute{attr("a", pb.AttributeType_ATTRIBUTE_TYPE_STRING, ""), attr("a", pb.AttributeType_ATTRIBUTE_TYPE_BOOL, "")}, `"a" declared twice`},
		{"unknown type", []*pb.ConfigAttribute{attr("a", pb.AttributeType_ATTRIBUTE_TYPE_UNSPECIFIED, "")}, "unknown type"},
		{"bad default", []*pb.ConfigAttribute{attr("a", pb.AttributeType_ATTRIBUTE_TYPE_NUMBER, "{nope")}, "default is not JSON"},
	}
	for _, tc := range cases {
		_, err := SchemaFromProto(&pb.ConfigSchema{Attributes: tc.attrs})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

type named string

func (n named) Name() string { return string(n) }

func TestBaseServerComponents(t *testing.T) {
	if _, err := NewBaseServer(KindTool, nil, []Component{named("a"), named("a")}); err == nil || !strings.Contains(err.Error(), `"a" served twice`) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := NewBaseServer(KindTool, nil, []Component{named("")}); err == nil {
		t.Error("empty name accepted")
	}
	s, err := NewBaseServer(KindSandbox, nil, []Component{named("b"), named("a")})
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context(), &pb.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range info.GetComponents() {
		names = append(names, c.GetName())
	}
	if d := cmp.Diff([]string{"b", "a"}, names); d != "" || info.GetKind() != pb.Kind_KIND_SANDBOX || info.GetSdkVersion() == "" {
		t.Errorf("info %v (order diff %s)", info, d)
	}
	if _, err := s.HostConn(); err == nil || !strings.Contains(err.Error(), "offers no Host") {
		t.Errorf("host conn without a host: %v", err)
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("printer"); err == nil || !strings.Contains(err.Error(), "provider, tool, sandbox, surface") {
		t.Errorf("ParseKind(printer) = %v", err)
	}
}
