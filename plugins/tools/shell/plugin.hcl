plugin "shell" {
  kind        = "tool"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-tools-shell"
  components  = ["shell"]
  description = "Runs shell commands through the kernel's gate and sandbox."
}
