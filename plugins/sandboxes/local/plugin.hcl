plugin "local" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-local"
  components  = ["local"]
  description = "Runs commands directly on this machine, in the workspace. No isolation."
  capabilities {
    env = ["PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER"]
  }
}
