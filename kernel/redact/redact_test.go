package redact_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/redact"
)

// Fake credentials, assembled so that this file does not itself trip
// secret scanners.
var (
	openAIKey    = "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_AbC-dEf"
	openAILegacy = "sk-" + "4bC9dE2fG7hJ1kL6mN3pQ8rS5tU0vW2xY7zA1bC4dE9fG"
	anthropicKey = "sk-" + "ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AbCdEfGh_IjKl"
	ghpToken     = "ghp" + "_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	ghsToken     = "ghs" + "_" + "Q7r8A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
	githubPAT    = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSTSKeyID  = "ASIA" + "Y34FZKBOKMUTVV7A"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	slackToken   = "xoxb" + "-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"
	googleKey    = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	jwt          = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ." +
		"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemKey = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HecZvG\n" +
		"h6Uj0JqfYv8nQ2r1aZ5ZbY3Y4m9x0yT5gD4oA1c2B3d4E5f6G7h8I9j0K1l2M3n4\n-----END RSA " + "PRIVATE KEY-----"
)

func TestStringPatterns(t *testing.T) {
	r := redact.New(nil, nil)
	tests := []struct {
		name, in, want string
	}{
		{"openai project key", "key is " + openAIKey + " ok", "key is [REDACTED:openai_key] ok"},
		{"openai legacy key", "OPENAI=" + openAILegacy, "OPENAI=[REDACTED:openai_key]"},
		{"anthropic key", "x-api-key " + anthropicKey, "x-api-key [REDACTED:anthropic_key]"},
		{"github ghp", "token " + ghpToken + ".", "token [REDACTED:github_token]."},
		{"github ghs", "(" + ghsToken + ")", "([REDACTED:github_token])"},
		{"github fine-grained", githubPAT, "[REDACTED:github_token]"},
		{"aws key id", "id=" + awsKeyID + "\n", "id=[REDACTED:aws_access_key_id]\n"},
		{"aws sts key id", awsSTSKeyID, "[REDACTED:aws_access_key_id]"},
		{"aws secret ini", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = [REDACTED:aws_secret_key]"},
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=" + awsSecret, "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]"},
		{"aws secret json", `"aws_secret_access_key": "` + awsSecret + `"`, `"aws_secret_access_key": "[REDACTED:aws_secret_key]"`},
		{"slack", "SLACK " + slackToken, "SLACK [REDACTED:slack_token]"},
		{"google", "key=" + googleKey + "&q=1", "key=[REDACTED:google_api_key]&q=1"},
		{"jwt", "session " + jwt + " end", "session [REDACTED:jwt] end"},
		{"authorization bearer", "Authorization: Bearer abc123DEF456ghi789", "Authorization: Bearer [REDACTED:bearer_token]"},
		{"bearer lower", "curl -H 'authorization: bearer tok_9f8e7d6c5b4a'", "curl -H 'authorization: bearer [REDACTED:bearer_token]'"},
		{"bearer jwt", "Bearer " + jwt, "Bearer [REDACTED:jwt]"},
		{"authorization basic", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:authorization]"},
		{"authorization token", "Authorization: token abcdef012345", "Authorization: token [REDACTED:authorization]"},
		{"pem", "key:\n" + pemKey + "\ndone", "key:\n[REDACTED:private_key]\ndone"},
		{"pem openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "[REDACTED:private_key]"},
		{"pem unterminated", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "[REDACTED:private_key]"},
		{"pem two blocks", pemKey + "\nmiddle\n" + pemKey, "[REDACTED:private_key]\nmiddle\n[REDACTED:private_key]"},
		{"url password", "postgres://app:s3cr3t@db:5432/app", "postgres://app:[REDACTED]@db:5432/app"},
		{"url password with at", "https://bob:p@ss@example.com/x", "https://bob:[REDACTED]@example.com/x"},
		{"url empty user", "redis://:hunter22@cache:6379", "redis://:[REDACTED]@cache:6379"},
		{"password env", "DB_PASSWORD=hunter2x", "DB_PASSWORD=[REDACTED:credential]"},
		{"password tight word", "password=hunter", "password=[REDACTED:credential]"},
		{"password yaml", "password: hunter22", "password: [REDACTED:credential]"},
		{"api_key colon", "api_key: 9f8e7d6c5b4a", "api_key: [REDACTED:credential]"},
		{"api-key quoted", `api-key = "correct horse battery"`, `api-key = "[REDACTED:credential]"`},
		{"json password", `{"password": "hunter2"}`, `{"password": "[REDACTED:credential]"}`},
		{"client secret", "client_secret='abcd1234efgh'", "client_secret='[REDACTED:credential]'"},
		{"query token", "GET /cb?token=abc123&x=1", "GET /cb?token=[REDACTED:credential]&x=1"},
		{"non-ascii around", "İstanbul ü password=hunter22 ß " + ghpToken + " é", "İstanbul ü password=[REDACTED:credential] ß [REDACTED:github_token] é"},
		{"several kinds on a line", "a=" + awsKeyID + " b=" + slackToken + " c=" + googleKey,
			"a=[REDACTED:aws_access_key_id] b=[REDACTED:slack_token] c=[REDACTED:google_api_key]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, r.String(tt.in)); diff != "" {
				t.Errorf("String(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestStringLeavesOrdinaryText(t *testing.T) {
	r := redact.New(nil, nil)
	tests := []struct{ name, in string }{
		{"prose", "The quick brown fox jumps over the lazy dog."},
		{"git sha", "commit 3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291"},
		{"short sha", "HEAD is now at 3f2a9c1 fix: handle nil"},
		{"uuid", "request 123e4567-e89b-12d3-a456-426614174000 done"},
		{"sha256", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{"go test output", "ok  \tgithub.com/sparrow-cli/sparrow/kernel/redact\t0.012s"},
		{"hyphenated words", "use the task-runner and disk-usage-analyzer-for-everyone tools"},
		{"sk word", "pip install sk-learn-contrib-pipelines-and-more"},
		{"bearer prose", "Bearer authentication sends a Bearer token in the header."},
		{"bearer template", "Authorization: Bearer $TOKEN"},
		{"bearer placeholder", "Authorization: Bearer <token>"},
		{"url without password", "https://example.com:8443/path?q=1 and ssh://git@github.com/org/repo"},
		{"url port only", "listening on http://localhost:8080"},
		{"email", "mail bob@example.com: thanks"},
		{"code assignment", "password := os.Getenv(\"DB_PASSWORD\")"},
		{"code field path", "token = cfg.Token"},
		{"code type", "password: string;"},
		{"template", `password: "${DB_PASSWORD}"`},
		{"printf", `fmt.Printf("password=%s", p)`},
		{"masked", "password: ********"},
		{"max tokens", "max_tokens=4096 input_tokens: 1234"},
		{"token count", "token: 4096"},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"},
		{"akia lower", "akiaiosfodnn7example is not a key"},
		{"eyj prose", "eyJustKidding is a word here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.in, r.String(tt.in)); diff != "" {
				t.Errorf("String changed ordinary text (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLiteralSecrets(t *testing.T) {
	env := map[string]string{
		"MY_SERVICE_TOKEN":  "tok-very-private-value",
		"db_password":       "Corr3ctHorse",
		"TOKEN_TTL":         "1",       // too short
		"SHORT_SECRET":      "abc1234", // 7 chars: too short
		"GIT_AUTHOR_NAME":   "Jane Developer",
		"HOME":              "/home/jane", // not a credential name
		"PRIVATE_REGISTRY":  "registry.internal.example",
		"OAUTH_CLIENT_INFO": "client-info-value",
	}
	r := redact.New([]string{"config-sensitive-1", "abc", "  padded-secret-value\n"}, env)
	tests := []struct{ name, in, want string }{
		{"config secret", "value config-sensitive-1 seen", "value [REDACTED] seen"},
		{"short config secret ignored", "abc def", "abc def"},
		{"trimmed secret", "x padded-secret-value y", "x [REDACTED] y"},
		{"env token", "sent tok-very-private-value twice: tok-very-private-value", "sent [REDACTED] twice: [REDACTED]"},
		{"env lower-case name", "login Corr3ctHorse", "login [REDACTED]"},
		{"short env ignored", "ttl 1 and abc1234", "ttl 1 and abc1234"},
		{"author not secret", "Author: Jane Developer", "Author: Jane Developer"},
		{"non-credential env", "cd /home/jane", "cd /home/jane"},
		{"private word", "pull registry.internal.example/img", "pull [REDACTED]/img"},
		{"auth word", "client-info-value", "[REDACTED]"},
		{"query escaped", "q=Corr3ctHorse%21", "q=[REDACTED]%21"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, r.String(tt.in)); diff != "" {
				t.Errorf("String(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestLongerSecretWins(t *testing.T) {
	r := redact.New([]string{"abcdefgh", "abcdefgh-ijkl"}, nil)
	if got, want := r.String("x abcdefgh-ijkl y abcdefgh"), "x [REDACTED] y [REDACTED]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLiteralSecretEdges covers literal secrets that overlap, contain or
// extend one another, touch, or sit at the ends of the text: no part of a
// secret that occurs whole is left, and ordinary text around is kept.
func TestLiteralSecretEdges(t *testing.T) {
	r := redact.New([]string{"abcdef12", "ef12ghij", "abcd1234", "abcd1234-extra", "zz-inner-zz", "inner-zz-tail"}, nil)
	tests := []struct{ name, in, want string }{
		{"overlapping: one stretch", "x abcdef12ghij y", "x [REDACTED] y"},
		{"overlap chain", "abcdef12ghij abcdef12ghij", "[REDACTED] [REDACTED]"},
		{"prefix of another: the longer wins", "k=abcd1234-extra;", "k=[REDACTED];"},
		{"prefix of another: alone", "k=abcd1234-extr;", "k=[REDACTED]-extr;"},
		{"contained in another", "(zz-inner-zz-tail)", "([REDACTED])"},
		{"touching: two placeholders", "abcdef12abcd1234", "[REDACTED][REDACTED]"},
		{"at both ends", "abcdef12 middle ef12ghij", "[REDACTED] middle [REDACTED]"},
		{"whole text", "abcd1234", "[REDACTED]"},
		{"part of a secret only", "abcdef1 f12ghij", "abcdef1 f12ghij"},
		{"then a pattern on the same line", "abcd1234 password=hunter22", "[REDACTED] password=[REDACTED:credential]"},
		{"a pattern before, on the same line", "password=hunter22 abcd1234", "password=[REDACTED:credential] [REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, r.String(tt.in)); diff != "" {
				t.Errorf("String(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestQueryEscapedSecret(t *testing.T) {
	r := redact.New([]string{"p@ss word+1"}, nil)
	if got, want := r.String("body: user=bob&pw=p%40ss+word%2B1"), "body: user=bob&pw=[REDACTED]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestIdempotent(t *testing.T) {
	r := redact.New([]string{"literal-secret-1"}, nil)
	in := strings.Join([]string{openAIKey, anthropicKey, ghpToken, awsKeyID, slackToken, googleKey, jwt, pemKey,
		"postgres://u:literal-secret-1@h/db", "password=hunter22", "Authorization: Bearer abc123def456"}, "\n")
	once := r.String(in)
	if twice := r.String(once); twice != once {
		t.Errorf("redacting twice changed the text:\n%s\n----\n%s", once, twice)
	}
	for _, secret := range []string{openAIKey, anthropicKey, ghpToken, awsKeyID, slackToken, googleKey, jwt, "literal-secret-1", "hunter22", "abc123def456", "MIIEpA"} {
		if strings.Contains(once, secret) {
			t.Errorf("output still holds %q:\n%s", secret, once)
		}
	}
}

func TestNilInputs(t *testing.T) {
	r := redact.New(nil, nil)
	if got := r.String(""); got != "" {
		t.Errorf("String(\"\") = %q", got)
	}
	if got := r.String("abc"); got != "abc" {
		t.Errorf("String(abc) = %q", got)
	}
}
