plugin "vercel-sandbox" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-vercel"
  components  = ["vercel-sandbox"]
  description = "Runs commands in a Vercel Sandbox (remote microVM) through the sandbox CLI, syncing the workspace up and back."
  capabilities {
    network = true
    env     = ["PATH", "HOME", "XDG_DATA_HOME", "VERCEL_AUTH_TOKEN", "VERCEL_TOKEN", "VERCEL_OIDC_TOKEN", "VERCEL_TEAM_ID", "VERCEL_PROJECT_ID"]
  }
}
