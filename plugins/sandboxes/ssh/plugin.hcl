plugin "ssh" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-ssh"
  components  = ["ssh"]
  description = "Runs commands on a remote host with the OpenSSH client, syncing a copy of the workspace up and back."
  capabilities {
    network = true
    env     = ["PATH", "HOME", "SSH_AUTH_SOCK"]
  }
}
