plugin "local-hardened" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-local-hardened"
  components  = ["local-hardened"]
  description = "Runs commands on this machine inside namespaces, Landlock, seccomp and a cgroup: the workspace, a read-only system and nothing else."
  capabilities {
    env = ["PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER"]
  }
}
