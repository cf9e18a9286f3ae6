plugin "daytona" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-daytona"
  components  = ["daytona"]
  description = "Runs commands in a Daytona sandbox (remote) through the daytona CLI, syncing the workspace up and back."
  capabilities {
    network = true
    env     = ["PATH", "HOME", "XDG_CONFIG_HOME", "DAYTONA_API_KEY", "DAYTONA_API_URL", "DAYTONA_TARGET", "DAYTONA_CONFIG_DIR"]
  }
}
