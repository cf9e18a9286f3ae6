plugin "fs" {
  kind        = "tool"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-tools-fs"
  components  = ["read_file", "write_file", "edit_file", "list_dir", "glob", "grep"]
  description = "Workspace file tools: read, write, edit, list, glob, grep."
}
