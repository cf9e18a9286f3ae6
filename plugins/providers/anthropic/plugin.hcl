plugin "anthropic" {
  kind        = "provider"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-provider-anthropic"
  components  = ["anthropic"]
  description = "Anthropic Messages API: streaming, tool use, extended thinking, prompt caching."
  capabilities {
    network = true
    env     = ["ANTHROPIC_API_KEY"]
  }
}
