plugin "worktree" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-worktree"
  components  = ["worktree"]
  description = "Runs each run in its own git worktree on a sparrow/<run> branch; merge or discard it afterwards."
  capabilities {
    env = ["PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"]
  }
}
