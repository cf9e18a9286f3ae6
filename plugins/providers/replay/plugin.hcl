plugin "replay" {
  kind        = "provider"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-provider-replay"
  components  = ["replay"]
  description = "Serves a recorded model conversation, turn by turn: deterministic runs, demos and tests."
}
