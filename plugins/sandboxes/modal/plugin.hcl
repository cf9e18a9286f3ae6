plugin "modal-sandbox" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-modal"
  components  = ["modal"]
  description = "Runs commands in a Modal Sandbox (remote container) through the modal CLI and Python SDK, syncing the workspace up and back."
  capabilities {
    network = true
    env     = ["PATH", "HOME", "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "MODAL_PROFILE", "MODAL_ENVIRONMENT"]
  }
}
