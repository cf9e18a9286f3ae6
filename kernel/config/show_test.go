package config

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestShow(t *testing.T) {
	user := `log_level = "warn"
provider "openai" {
  plugin      = "openai"
  api_key     = env("OPENAI_API_KEY")
  base_url    = env("OPENAI_BASE_URL", "https://api.openai.com/v1")
  auth_header = env("MY_SECRET")
  session_token = "tok-literal-123"
  password    = "hunter2"
  custom      = "declared-sensitive-value"
}
permissions {
  deny {
    tools  = ["web_fetch"]
    reason = "offline"
  }
}
`
	f := newFixture(t, user, "")
	f.env["SPARROW_MODEL"] = "gpt-5"
	f.env["OPENAI_API_KEY"] = "sk-very-secret"
	f.env["MY_SECRET"] = "bearer-very-secret"
	cfg := f.load(t, Overrides{MaxTurns: ptr(30)})
	cfg.MarkSensitive("provider", "openai", []AttrSpec{{Name: "custom", Type: TypeString, Sensitive: true}})

	var b bytes.Buffer
	if err := cfg.Show(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()

	for _, secret := range []string{"sk-very-secret", "bearer-very-secret", "tok-literal-123", "hunter2", "declared-sensitive-value"} {
		if strings.Contains(out, secret) {
			t.Errorf("Show leaked %q:\n%s", secret, out)
		}
	}
	from := func(line int) string { return fmt.Sprintf("# from %s:%d", f.userFile, line) }
	for _, want := range [][]string{
		{`model `, `= "gpt-5"`, "# from env SPARROW_MODEL"},
		{`log_level `, `= "warn"`, from(1)},
		{`sandbox `, `= "local-hardened"`, "# default"},
		{`api_key `, "= (sensitive)", from(4)},
		{`auth_header `, "= (sensitive)", from(6)},
		{`session_token `, "= (sensitive)", from(7)},
		{`password `, "= (sensitive)", from(8)},
		{`custom `, "= (sensitive)", from(9)},
		{`base_url `, `= "https://api.openai.com/v1"`, from(5)},
		{`max_turns `, "= 30", "# from flag --max-turns"},
		{`level `, "= 0.3", "# default (supervised)"},
		{`deny {`, from(12)},
	} {
		if !hasLine(out, want...) {
			t.Errorf("no line with %q in:\n%s", want, out)
		}
	}

	// The output is itself valid HCL.
	if _, diags := hclsyntax.ParseConfig(b.Bytes(), "show.hcl", hcl.InitialPos); diags.HasErrors() {
		t.Errorf("Show output does not parse: %v\n%s", diags, out)
	}
}

// hasLine reports whether some line of out contains every part, in order.
func hasLine(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := line, true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}

func TestLooksSensitive(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "APIKey": true, "token": true, "client_secret": true, "password": true, "db_passwd": true, "credentials_file": true,
		"base_url": false, "timeout": false, "model": false,
	} {
		if got := looksSensitive(name); got != want {
			t.Errorf("looksSensitive(%q) = %v, want %v", name, got, want)
		}
	}
}
