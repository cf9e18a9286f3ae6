# The manifest Sparrow reads, as data, before it runs anything. A WASM
# module cannot describe itself without being run, so each tool's risk,
# arguments and description live here.
plugin "json-tool" {
  kind        = "tool"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "wasm"              # a WASI module run under wazero, in-process
  entry       = "json-tool.wasm"    # beside this file
  components  = ["json_get", "json_set"]
  description = "Read and edit JSON files by JSON Pointer, keeping key order and indentation."

  # No capabilities block: the module needs neither the real clock nor
  # real entropy (a temporary file's name only has to be unique), and the
  # deterministic fakes keep a call's result a function of the workspace.

  tool "json_get" {
    risk           = "read-only"   # the workspace is mounted read-only
    path_arguments = ["path"]      # the gate checks it like any file path
    description    = <<-EOT
      Read one value from a JSON file in the workspace, addressed by a JSON
      Pointer (RFC 6901): "" is the whole document, "/scripts/test" is key
      "test" inside key "scripts", "/files/0" is the first element of an array.
      Write "~1" for a "/" inside a key and "~0" for a "~".

      Returns the value as pretty-printed JSON (a string comes back quoted). A
      pointer that names nothing says which part failed and lists the keys or
      indexes there. Prefer it to reading a whole large file.
    EOT
    input_schema = {
      type = "object"
      properties = {
        path    = { type = "string", description = "Workspace-relative path of the JSON file, e.g. package.json." }
        pointer = { type = "string", description = "JSON Pointer to the value, e.g. /scripts/test; \"\" for the whole document." }
      }
      required             = ["path", "pointer"]
      additionalProperties = false
    }
    timeout = "10s"
  }

  tool "json_set" {
    risk           = "mutating"    # the workspace is writable only for this tool, once the gate allows the call
    path_arguments = ["path"]
    description    = <<-EOT
      Set one value in an existing JSON file in the workspace, addressed by a
      JSON Pointer (RFC 6901, as in json_get: "/version", "/scripts/lint",
      "/files/0"; "~1" is "/" and "~0" is "~" inside a key).

      An existing key or array element is replaced; a new last key is added to
      its object; "/files/-" appends to the array at /files. Parents are never
      created: set a missing object first (e.g. "/engines" to {}) and then a key
      inside it. The file keeps its key order, indentation and final newline.
      Returns one line saying what changed. Use it instead of a text edit for
      package.json, tsconfig.json and other JSON without comments.
    EOT
    input_schema = {
      type = "object"
      properties = {
        path    = { type = "string", description = "Workspace-relative path of an existing JSON file, e.g. package.json." }
        pointer = { type = "string", description = "JSON Pointer to set, e.g. /version; /array/- appends; \"\" replaces the whole document." }
        value   = { description = "The new value: any JSON (string, number, boolean, null, object or array)." }
      }
      required             = ["path", "pointer", "value"]
      additionalProperties = false
    }
    timeout = "10s"
  }
}
