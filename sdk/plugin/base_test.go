package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sparrow-cli/sparrow/sdk"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// plain is a component with a name and nothing else.
type plain string

func (p plain) Name() string { return string(p) }

// described explains itself in `sparrow plugin info`.
type described struct{ name, desc string }

func (d described) Name() string        { return d.name }
func (d described) Description() string { return d.desc }

// configurable declares a schema and records what Configure receives.
type configurable struct {
	name   string
	schema plugin.Schema
	fail   error

	mu  sync.Mutex
	got []plugin.Config
}

func (c *configurable) Name() string                { return c.name }
func (c *configurable) ConfigSchema() plugin.Schema { return c.schema }
func (c *configurable) Configure(_ context.Context, cfg plugin.Config) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, cfg)
	return c.fail
}

func (c *configurable) received() []plugin.Config {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]plugin.Config(nil), c.got...)
}

// basePlugin is the smallest kind there is: the base contract alone. The
// same value serves both sides, as go-plugin's test helper expects.
type basePlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	comps []plugin.Component
	host  plugin.HostRegistrar
	// raw, when set, is served instead of the SDK's base server, to play
	// a plugin that misbehaves on the wire.
	raw pb.PluginServer

	server *plugin.BaseServer
}

func (p *basePlugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	if p.raw != nil {
		pb.RegisterPluginServer(s, p.raw)
		return nil
	}
	_, base, err := plugin.Register(plugin.KindSurface, broker, s, p.comps)
	p.server = base
	return err
}

func (p *basePlugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return plugin.NewBaseClient(conn, broker, p.host), nil
}

func connectBase(t *testing.T, multiplex bool, p *basePlugin) *plugin.BaseClient {
	t.Helper()
	client, _ := goplugin.TestPluginGRPCConn(t, multiplex, map[string]goplugin.Plugin{"base": p})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense("base")
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*plugin.BaseClient)
}

func TestInfoListsComponentsInOrder(t *testing.T) {
	c := connectBase(t, false, &basePlugin{comps: []plugin.Component{
		described{"zeta", "the last letter"}, plain("alpha"), &configurable{name: "mid"},
	}})
	got, err := c.Info(t.Context(), "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	want := plugin.Info{Kind: plugin.KindSurface, SDKVersion: sdk.Version, Components: []plugin.ComponentInfo{
		{Name: "zeta", Description: "the last letter"}, {Name: "alpha"}, {Name: "mid"},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("info (-want +got):\n%s", d)
	}
}

func TestSchemaOverTheWire(t *testing.T) {
	schema := plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "base_url", Type: plugin.String, Required: true, Description: "API root"},
		{Name: "api_key", Type: plugin.String, Sensitive: true},
		{Name: "timeout", Type: plugin.Duration, Default: "30s"},
	}}
	c := connectBase(t, false, &basePlugin{comps: []plugin.Component{
		&configurable{name: "cfg", schema: schema},
		plain("bare"),
		&configurable{name: "broken", schema: plugin.Schema{Attributes: []plugin.Attribute{{Name: "x", Type: 42}}}},
	}})
	cases := []struct {
		component string
		want      plugin.Schema
		code      codes.Code
		msg       string
	}{
		{component: "cfg", want: schema},
		{component: "bare", want: plugin.Schema{}},
		{component: "nope", code: codes.NotFound, msg: `no surface component "nope" in this plugin`},
		{component: "broken", code: codes.Internal, msg: `component "broken": attribute "x": unknown type 42`},
	}
	for _, tc := range cases {
		t.Run(tc.component, func(t *testing.T) {
			got, err := c.Schema(t.Context(), tc.component)
			if tc.code != codes.OK {
				if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("err = %v, want %v %q", err, tc.code, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("schema (-want +got):\n%s", d)
			}
		})
	}
}

func TestConfigurePassesJSONAndWorkspace(t *testing.T) {
	cases := []struct {
		name string
		cfg  plugin.Config
	}{
		{"values and workspace", plugin.Config{Values: json.RawMessage(`{"base_url":"https://api.example","retries":3,"headers":{"X-A":"b"}}`), Workspace: "/home/ada/project", StateDir: "/home/ada/.local/state/sparrow"}},
		{"no values", plugin.Config{Workspace: "/w"}},
		{"no workspace", plugin.Config{Values: json.RawMessage(`{"stream":false}`)}},
		{"unicode survives", plugin.Config{Values: json.RawMessage(`{"greeting":"grüß dich ✓"}`), Workspace: "/tmp/dossier été"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			comp := &configurable{name: "cfg"}
			c := connectBase(t, false, &basePlugin{comps: []plugin.Component{comp}})
			if err := c.Configure(t.Context(), "cfg", tc.cfg); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]plugin.Config{tc.cfg}, comp.received(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("configure (-sent +received):\n%s", d)
			}
		})
	}
}

func TestConfigureFailures(t *testing.T) {
	refuses := &configurable{name: "strict", fail: errors.New("base_url must be https")}
	watched := &configurable{name: "watched"}
	c := connectBase(t, false, &basePlugin{comps: []plugin.Component{refuses, watched, plain("bare")}})
	cases := []struct {
		name      string
		component string
		values    string
		code      codes.Code
		msg       string
	}{
		{"component refuses", "strict", `{"base_url":"http://x"}`, codes.InvalidArgument, `configure "strict": base_url must be https`},
		{"unknown component", "ghost", `{}`, codes.NotFound, `no surface component "ghost"`},
		{"not configurable is a no-op", "bare", `{"anything":1}`, codes.OK, ""},
		{"values not JSON never leave the kernel", "watched", `{"a":`, codes.Unknown, `configure "watched": values are not JSON`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Configure(t.Context(), tc.component, plugin.Config{Values: json.RawMessage(tc.values)})
			if tc.code == codes.OK {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v (%v), want %v %q", err, status.Code(err), tc.code, tc.msg)
			}
		})
	}
	if got := watched.received(); len(got) != 0 {
		t.Errorf("a component was configured with values that are not JSON: %+v", got)
	}
}

func TestRegisterChecksNames(t *testing.T) {
	cases := []struct {
		name  string
		comps []plugin.Component
		want  string
	}{
		{"duplicate", []plugin.Component{plain("a"), described{"a", "again"}}, `tool component "a" served twice`},
		{"empty", []plugin.Component{plain("")}, "a tool component has an empty name"},
		{"empty after good", []plugin.Component{plain("a"), plain("")}, "a tool component has an empty name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := plugin.NewBaseServer(plugin.KindTool, nil, tc.comps); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewBaseServer: err = %v, want %q", err, tc.want)
			}
			if _, _, err := plugin.Register(plugin.KindTool, nil, grpc.NewServer(), tc.comps); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Register: err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestComponentsGet(t *testing.T) {
	comps, _, err := plugin.Register(plugin.KindSandbox, nil, grpc.NewServer(), []plain{"local", "docker"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := comps.Get(plugin.KindSandbox, "docker"); err != nil || got != "docker" {
		t.Errorf("Get(docker) = %q, %v", got, err)
	}
	_, err = comps.Get(plugin.KindSandbox, "modal")
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `no sandbox "modal" in this plugin`) {
		t.Errorf("Get(modal) = %v", err)
	}
}

// hostEcho is a Host handler that answers with the token it was called
// with.
func hostEcho(_ context.Context, token string, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	_, err := sio.Stdout.Write([]byte(token + ":" + strings.Join(req.Argv, " ")))
	return sandbox.Exit{Code: 3}, err
}

func TestHostConnFollowsInfo(t *testing.T) {
	for _, multiplex := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "multiplexed"}[multiplex], func(t *testing.T) {
			p := &basePlugin{comps: []plugin.Component{plain("a")}, host: func(s *grpc.Server) { sandbox.RegisterHost(s, hostEcho) }}
			c := connectBase(t, multiplex, p)
			if _, err := p.server.HostConn(); err == nil || !strings.Contains(err.Error(), "offers no Host service") {
				t.Fatalf("before Info, HostConn = %v; the plugin cannot know the broker id yet", err)
			}
			if _, err := c.Info(t.Context(), "test"); err != nil {
				t.Fatal(err)
			}
			conn, err := p.server.HostConn()
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := p.server.HostConn(); again != conn {
				t.Error("HostConn dialed twice; it should share one connection")
			}
			var out strings.Builder
			exit, err := sandbox.NewHostClient(conn, "tok-1").Exec(t.Context(), sandbox.ExecRequest{Argv: []string{"true"}}, sandbox.IO{Stdout: &out})
			if err != nil || exit.Code != 3 || out.String() != "tok-1:true" {
				t.Fatalf("host exec = %+v, %v, out %q", exit, err, out.String())
			}
		})
	}
}

func TestNoHostOffered(t *testing.T) {
	p := &basePlugin{comps: []plugin.Component{plain("a")}}
	c := connectBase(t, false, p)
	if _, err := c.Info(t.Context(), "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.server.HostConn(); err == nil || !strings.Contains(err.Error(), "the kernel offers no Host service to this plugin") {
		t.Fatalf("HostConn = %v", err)
	}
}

// liar answers the base contract with what no SDK plugin would send.
type liar struct {
	pb.UnimplementedPluginServer
	info   *pb.InfoResponse
	schema *pb.ConfigSchema
}

func (l *liar) Info(context.Context, *pb.InfoRequest) (*pb.InfoResponse, error) { return l.info, nil }
func (l *liar) Schema(context.Context, *pb.SchemaRequest) (*pb.SchemaResponse, error) {
	return &pb.SchemaResponse{Schema: l.schema}, nil
}

func TestBaseClientRejectsBadAnswers(t *testing.T) {
	comp := func(names ...string) []*pb.Component {
		var out []*pb.Component
		for _, n := range names {
			out = append(out, &pb.Component{Name: n})
		}
		return out
	}
	cases := []struct {
		name string
		info *pb.InfoResponse
		want string
	}{
		{"unspecified kind", &pb.InfoResponse{SdkVersion: "0.1.0", Components: comp("a")}, "plugin reported an unknown kind KIND_UNSPECIFIED"},
		{"kind from the future", &pb.InfoResponse{Kind: pb.Kind(9), SdkVersion: "0.1.0", Components: comp("a")}, "plugin reported an unknown kind 9"},
		{"duplicate component", &pb.InfoResponse{Kind: pb.Kind_KIND_TOOL, Components: comp("a", "b", "a")}, `empty or duplicate component name "a"`},
		{"empty component", &pb.InfoResponse{Kind: pb.Kind_KIND_TOOL, Components: comp("a", "")}, `empty or duplicate component name ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := connectBase(t, false, &basePlugin{raw: &liar{info: tc.info}})
			if _, err := c.Info(t.Context(), "test"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	c := connectBase(t, false, &basePlugin{raw: &liar{schema: &pb.ConfigSchema{Attributes: []*pb.ConfigAttribute{
		{Name: "a", Type: pb.AttributeType_ATTRIBUTE_TYPE_NUMBER, DefaultJson: "three"},
	}}}})
	if _, err := c.Schema(t.Context(), "x"); err == nil || !strings.Contains(err.Error(), `component "x" sent a bad config schema: attribute "a": default is not JSON`) {
		t.Fatalf("bad schema: %v", err)
	}
}

func TestConfigDecode(t *testing.T) {
	var v struct {
		URL     string   `json:"base_url"`
		Retries int      `json:"retries"`
		Mounts  []string `json:"mounts"`
	}
	if err := (plugin.Config{}).Decode(&v); err != nil {
		t.Fatalf("no values decode to nothing: %v", err)
	}
	if err := (plugin.Config{Values: json.RawMessage(`{"base_url":"u","retries":2,"mounts":["/a"]}`)}).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.URL != "u" || v.Retries != 2 || !cmp.Equal(v.Mounts, []string{"/a"}) {
		t.Errorf("decoded %+v", v)
	}
	if err := (plugin.Config{Values: json.RawMessage(`{"retries":"two"}`)}).Decode(&v); err == nil {
		t.Error("a string decoded into an int")
	}
}

func TestHandshake(t *testing.T) {
	want := goplugin.HandshakeConfig{
		ProtocolVersion:  sdk.ProtocolVersion,
		MagicCookieKey:   "SPARROW_PLUGIN_MAGIC_COOKIE",
		MagicCookieValue: plugin.MagicCookieValue,
	}
	if d := cmp.Diff(want, plugin.Handshake()); d != "" {
		t.Errorf("handshake (-want +got):\n%s", d)
	}
	if plugin.MagicCookieValue == "" {
		t.Error("empty magic cookie value")
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range plugin.Kinds {
		if got, err := plugin.ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	for _, bad := range []string{"", "printer", "Tool", "tools"} {
		if _, err := plugin.ParseKind(bad); err == nil || !strings.Contains(err.Error(), "want one of provider, tool, sandbox, surface") {
			t.Errorf("ParseKind(%q) = %v", bad, err)
		}
	}
}
