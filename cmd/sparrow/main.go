// Command sparrow is the agentic coding CLI: one cli · grows with you.
package main

import (
	"os"

	"github.com/sparrow-cli/sparrow/cmd/sparrow/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.Env{
		Args:      os.Args[1:],
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		LookupEnv: os.LookupEnv,
	}))
}
