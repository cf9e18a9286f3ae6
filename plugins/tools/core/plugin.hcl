plugin "core" {
  kind        = "tool"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-tools"
  components  = ["read_file", "write_file", "edit_file", "list_dir", "shell"]
  description = "The built-in tools: workspace files (read, write, edit, list) and the shell, in one process."
}
