plugin "docker" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-docker"
  components  = ["docker"]
  description = "Runs commands in one Docker container per run through the docker CLI, the workspace bind-mounted, network off unless the policy allows it."
  capabilities {
    # DOCKER_HOST may name a tcp:// or ssh:// engine, and containers reach
    # the network when the policy allows it.
    network = true
    # None of these reaches a command: they configure the docker CLI.
    # LANG and TERM are forwarded only when the policy allowlists them.
    env = ["PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "LANG", "TERM"]
  }
}
