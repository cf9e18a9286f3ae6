plugin "hello-tool" {
  kind        = "tool"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "hello-tool"
  components  = ["greet", "shout"]
  description = "An example third-party tool plugin."
}
