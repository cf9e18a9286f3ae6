// Command sparrow-provider-openai is the OpenAI provider plugin: openai,
// openai-compatible and the presets for OpenAI-compatible servers.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/providers/openai"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func main() { provider.Serve(openai.Components()...) }
