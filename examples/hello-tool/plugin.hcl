# The manifest Sparrow reads, as data, before it runs anything.
plugin "hello-tool" {
  kind        = "tool"                # provider | tool | sandbox | surface
  version     = "0.1.0"               # this plugin's version (strict semver)
  sdk         = ">= 0.1.0, < 0.2.0"   # SDK versions it speaks; checked before launch
  runtime     = "grpc"                # a go-plugin process (the default)
  entry       = "hello-tool"          # the executable, inside this directory
  components  = ["greet", "shout"]    # the tools it serves
  description = "An example third-party tool plugin."
  # No capabilities block: no network, no extra paths, no environment.
  # shout's command runs in the kernel's sandbox, not in this process.
}
