package redact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/redact"
)

// toolOutput builds about 4 KiB of typical tool output: go test and git
// log lines, a config excerpt, and (when dirty) a few secrets.
func toolOutput(dirty bool) string {
	var b strings.Builder
	for i := 0; b.Len() < 4096-400; i++ {
		fmt.Fprintf(&b, "commit 3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a%03d\n", i)
		fmt.Fprintf(&b, "ok  \tgithub.com/sparrow-cli/sparrow/kernel/pkg%d\t0.%03ds\n", i, i)
		b.WriteString("func (k *Kernel) secrets() []string { return slices.Clone(k.secretValues) }\n")
		fmt.Fprintf(&b, "request 123e4567-e89b-12d3-a456-4266141740%02d served in %dms; max_tokens=4096\n", i%100, i)
	}
	if dirty {
		b.WriteString("export OPENAI_API_KEY=" + openAIKey + "\n")
		b.WriteString("curl -H 'Authorization: Bearer " + jwt + "' https://bob:hunter22@api.example.com/v1\n")
		b.WriteString("DB_PASSWORD=literal-secret-1\n")
	}
	for b.Len() < 4096 {
		b.WriteString("PASS\n")
	}
	return b.String()
}

// BenchmarkRedact measures String on a 4 KiB chunk of tool output, the
// size a command's output usually streams in, without and with secrets.
func BenchmarkRedact(b *testing.B) {
	env := map[string]string{"OPENAI_API_KEY": openAIKey, "HOME": "/home/jane", "GITHUB_TOKEN": ghpToken}
	r := redact.New([]string{"literal-secret-1", "another-secret-value"}, env)
	for _, dirty := range []bool{false, true} {
		in := toolOutput(dirty)
		b.Run(fmt.Sprintf("dirty=%v", dirty), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				_ = r.String(in)
			}
		})
	}
}

// BenchmarkRedactJSON measures JSON, which the event bus runs on every
// payload, on a ToolOutput holding a 4 KiB chunk with secrets.
func BenchmarkRedactJSON(b *testing.B) {
	r := redact.New([]string{"literal-secret-1"}, nil)
	out := toolOutput(true)
	doc := []byte(fmt.Sprintf(`{"call_id":"call_1","text":%q,"final":true}`, out))
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.JSON(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// runEnv is the environment of a developer's shell as a run sees it: about
// 40 variables, eight of them credentials by name and long enough to be
// redacted, a few credential-looking names with values that are not
// secrets or too short, and the usual PATH, locale and tool settings.
func runEnv() map[string]string {
	return map[string]string{
		"PATH":                  "/home/jane/go/bin:/usr/local/go/bin:/home/jane/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
		"HOME":                  "/home/jane",
		"USER":                  "jane",
		"LOGNAME":               "jane",
		"SHELL":                 "/bin/zsh",
		"LANG":                  "en_US.UTF-8",
		"LC_ALL":                "en_US.UTF-8",
		"TERM":                  "xterm-256color",
		"COLORTERM":             "truecolor",
		"PWD":                   "/home/jane/src/shop",
		"OLDPWD":                "/home/jane/src",
		"EDITOR":                "nvim",
		"PAGER":                 "less",
		"LESS":                  "-R",
		"TMPDIR":                "/tmp",
		"XDG_CONFIG_HOME":       "/home/jane/.config",
		"XDG_STATE_HOME":        "/home/jane/.local/state",
		"XDG_RUNTIME_DIR":       "/run/user/1000",
		"GOPATH":                "/home/jane/go",
		"GOFLAGS":               "-mod=readonly",
		"GOPROXY":               "https://proxy.golang.org,direct",
		"CARGO_HOME":            "/home/jane/.cargo",
		"NVM_DIR":               "/home/jane/.nvm",
		"NODE_ENV":              "development",
		"DOCKER_HOST":           "unix:///run/user/1000/docker.sock",
		"KUBECONFIG":            "/home/jane/.kube/config",
		"HISTSIZE":              "100000",
		"SSH_AUTH_SOCK":         "/run/user/1000/ssh-agent.socket",
		"GIT_AUTHOR_NAME":       "Jane Developer",
		"GIT_AUTHOR_EMAIL":      "jane@example.com",
		"TOKEN_TTL":             "3600",
		"KEYTIMEOUT":            "1",
		"OPENAI_API_KEY":        openAIKey,
		"ANTHROPIC_API_KEY":     anthropicKey,
		"GITHUB_TOKEN":          ghpToken,
		"AWS_ACCESS_KEY_ID":     awsKeyID,
		"AWS_SECRET_ACCESS_KEY": awsSecret,
		"NPM_TOKEN":             "npm_Zx81PqR2sT3uV4wX5yZ6aB7cD8eF9gH0iJ1k",
		"DATABASE_PASSWORD":     "Tr0ub4dor&3-shop-prod",
		"SENTRY_AUTH_TOKEN":     "sntrys_eyJpYXQiOjE3MDAwMDAwMDB9_d41d8cd98f00b204e9800998ecf8427e",
	}
}

// configSecrets are the sensitive config values a kernel knows: provider
// API keys, a gateway bot token, a webhook secret.
var configSecrets = []string{
	anthropicKey,
	"sk-or-v1-0c5b8e3d9a7f41e2b6d4c8a0f3e5d7b9c1a2e4f6d8b0c2e4",
	"7312946580:AAF-q9Zx_W2vE4rT6yU8iO0pA1sD3fG5hJ7",
	"whsec_4Kq9ZtL2mV8xR1nB6cJ3wE5yH0uA7sD",
}

// outputLines are the lines 64 KiB of tool output is built from: Go source
// (which names tokens, passwords and authorization headers the way code
// does, so the credential patterns' anchors fire without a secret), go
// test and build output, git log and ls -l.
var outputLines = []string{
	"// Login checks the password against the stored hash and returns a session token.",
	"func (s *Server) Login(ctx context.Context, req *LoginRequest) (*Session, error) {",
	"\tuser, err := s.store.UserByEmail(ctx, req.Email)",
	"\tif err != nil || !s.hasher.Verify(user.PasswordHash, req.Password) {",
	"\t\treturn nil, fmt.Errorf(\"login %s: %w\", req.Email, ErrBadCredentials)",
	"\ttoken := s.tokens.Issue(user.ID, s.cfg.TokenTTL)",
	"\treq.Header.Set(\"Authorization\", \"Bearer \"+token)",
	"\tapiKey := os.Getenv(\"PAYMENTS_API_KEY\")",
	"\treturn &Session{UserID: user.ID, Token: token, Expires: time.Now().Add(s.cfg.TokenTTL)}, nil",
	"}",
	"=== RUN   TestLogin/wrong_password",
	"--- PASS: TestLogin/wrong_password (0.00s)",
	"ok  \tgithub.com/acme/shop/internal/auth\t0.412s\tcoverage: 81.3% of statements",
	"ok  \tgithub.com/acme/shop/internal/store\t1.094s\tcoverage: 74.0% of statements",
	"internal/cart/cart.go:88:14: undefined: discount.Apply",
	"commit 9c4e1f2a7b3d8e6f5a0c1b2d3e4f5a6b7c8d9e0f",
	"Author: Jane Developer <jane@example.com>",
	"Date:   Mon Nov 23 10:12:44 2026 +0000",
	"    cart: apply discounts before tax (#412)",
	"-rw-r--r--  1 jane jane   4312 Nov 23 10:12 checkout_test.go",
	"drwxr-xr-x  4 jane jane   4096 Nov 22 18:01 internal",
	"request 123e4567-e89b-12d3-a456-426614174000 served in 12ms (max_tokens=4096)",
}

// secretLines are what the dirty output adds, once each: an env dump of
// a literal env secret, a config secret in a log line, an API key and a
// bearer token in a curl line, and a password in a URL.
var secretLines = []string{
	"export GITHUB_TOKEN=" + ghpToken,
	"2026/11/23 10:12:45 telegram: webhook registered with secret whsec_4Kq9ZtL2mV8xR1nB6cJ3wE5yH0uA7sD",
	"curl -H 'x-api-key: " + anthropicKey + "' -H 'Authorization: Bearer " + jwt + "' https://api.example.com/v1",
	"dsn: postgres://shop:Tr0ub4dor&3-shop-prod@db.internal:5432/shop",
}

// minified64K returns 64 KiB of one line of minified JSON, as curl prints
// an API's answer: many keys the credential patterns anchor on, no secret.
func minified64K() string {
	const size = 64 << 10
	var b strings.Builder
	b.WriteString(`{"users":[`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `{"id":%d,"login":"user%d","auth_provider":"github","token_type":"bearer","access_token_ttl":3600,`+
			`"api_url":"https://api.example.com/v1/users/%d","password_changed_at":"2026-11-%02dT10:00:00Z"},`, i, i, i, i%28+1)
	}
	return b.String()[:size]
}

// output64K returns exactly 64 KiB of tool output; when dirty, the secret
// lines are spread through it.
func output64K(dirty bool) string {
	const size = 64 << 10
	var b strings.Builder
	b.Grow(size)
	next := 0
	for i := 0; b.Len() < size; i++ {
		if dirty && next < len(secretLines) && b.Len() >= (next+1)*size/(len(secretLines)+1) {
			b.WriteString(secretLines[next] + "\n")
			next++
			continue
		}
		b.WriteString(outputLines[i%len(outputLines)] + "\n")
	}
	return b.String()[:size]
}

// BenchmarkRedact64K measures redaction of one large tool output (64 KiB:
// a long test log, a big file read) by a Redactor built the way a run
// builds it (config secrets and a ~40-variable environment). Every tool
// output and model message passes through it at the event bus before any
// surface or the recorder sees it, so its throughput bounds how fast a
// chatty command's output can stream. "clean" holds no secret; "dirty"
// holds five spread through the text; "minified" is one 64 KiB line of
// JSON full of credential-like keys. The json cases redact the same text
// as a ToolOutput payload, which is what the bus actually runs.
func BenchmarkRedact64K(b *testing.B) {
	r := redact.New(configSecrets, runEnv())
	for _, tc := range []struct {
		name, in string
		secrets  int
	}{{"clean", output64K(false), 0}, {"dirty", output64K(true), 5}, {"minified", minified64K(), 0}} {
		name, in := tc.name, tc.in
		if got := strings.Count(r.String(in), "[REDACTED"); got != tc.secrets {
			b.Fatalf("%s: %d redactions, want %d", name, got, tc.secrets)
		}
		b.Run("string/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				_ = r.String(in)
			}
		})
		doc, err := json.Marshal(map[string]any{"call_id": "call_7", "text": in, "final": true})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("json/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.JSON(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
