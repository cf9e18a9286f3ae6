package redact_test

import (
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
