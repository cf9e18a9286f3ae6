package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// sparrowCase is a home directory, a git workspace and a config pointing
// Sparrow at the fake model; everything else is the default config.
type sparrowCase struct {
	o        options
	home, ws string
	env      []string
}

func newSparrowCase(o options, vendor, url string) (*sparrowCase, error) {
	home, err := os.MkdirTemp("", "sparrow-perf-")
	if err != nil {
		return nil, err
	}
	c := &sparrowCase{o: o, home: home, ws: filepath.Join(home, "project")}
	// A small project under git: the start-of-run checkpoint uses the
	// repository's own object store, as on a user's machine.
	files := map[string]string{
		"go.mod":           "module example.com/project\n\ngo 1.22\n",
		"README.md":        "# project\n\nA small project the benchmark works in.\n",
		"main.go":          "package main\n\nfunc main() { println(greet(\"world\")) }\n",
		"greet.go":         "package main\n\nfunc greet(n string) string { return \"hello, \" + n }\n",
		"greet_test.go":    "package main\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {\n\tif greet(\"x\") != \"hello, x\" {\n\t\tt.Fatal(\"greet\")\n\t}\n}\n",
		".gitignore":       "bin/\n",
		"docs/notes.md":    "Notes.\n",
		"internal/a/a.go":  "package a\n\n// A is a.\nconst A = 1\n",
		"internal/b/b.go":  "package b\n\n// B is b.\nconst B = 2\n",
		"scripts/build.sh": "#!/bin/sh\ngo build ./...\n",
	}
	for name, body := range files {
		p := filepath.Join(c.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = c.ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=perf", "GIT_AUTHOR_EMAIL=perf@example.com", "GIT_COMMITTER_NAME=perf", "GIT_COMMITTER_EMAIL=perf@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
		return nil
	}
	if err := git("init", "-q"); err != nil {
		return nil, err
	}
	if err := git("add", "-A"); err != nil {
		return nil, err
	}
	if err := git("commit", "-q", "-m", "init"); err != nil {
		return nil, err
	}
	model, block := "gpt-4.1-mini", fmt.Sprintf("provider \"openai\" {\n  base_url = %q\n}\n", url+"/v1")
	keyVar := "OPENAI_API_KEY"
	if vendor == vendorAnthropic {
		model, block, keyVar = "claude-sonnet-4-5", fmt.Sprintf("provider \"anthropic\" {\n  base_url = %q\n}\n", url), "ANTHROPIC_API_KEY"
	}
	cfg := fmt.Sprintf("model = %q\n%s\nautonomy {\n  level = \"trusted\"\n}\n", model, block)
	if o.sandbox != "" {
		cfg += fmt.Sprintf("sandbox = %q\n", o.sandbox)
	}
	cfg += o.extra
	dir := filepath.Join(home, ".config", "sparrow")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "sparrow.hcl"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	c.env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SPARROW_PLUGIN_PATH=" + o.plugins,
		keyVar + "=sk-perf-0123456789abcdef", "LANG=C.UTF-8"}
	return c, nil
}

// command is one `sparrow run --json` in the case's workspace.
func (c *sparrowCase) command() *exec.Cmd {
	cmd := exec.Command(c.o.sparrow, "-C", c.ws, "run", "--json", "Run the steps, one shell call each.")
	cmd.Env = c.env
	return cmd
}
