plugin "search" {
  kind        = "tool"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "wasm"
  entry       = "search.wasm"
  components  = ["glob", "grep"]
  description = "Find workspace files by name (glob) and search their contents (grep), as a WASM module with no access beyond the workspace."

  # No capabilities: the module needs neither the real clock nor real
  # entropy (file times come from the file system), and the deterministic
  # fakes keep a call's result a function of the workspace alone.

  tool "glob" {
    risk           = "read-only"
    path_arguments = ["path"]
    description    = <<-EOT
      Find workspace files by name pattern. `pattern` is a glob relative to `path`
      (default: the workspace root): `*` matches within one directory, `**` spans
      directories, `?` is one character, `[abc]` and `{a,b}` are alternatives. So
      `*.go` is Go files directly in `path`, `**/*.go` all of them below it, and
      `src/**/*_test.{ts,tsx}` test files under src.

      Files are listed as workspace-relative paths, most recently modified first.
      `.git` and files ignored by `.gitignore` are skipped. At most 1000 files; more
      end with a `[truncated: …]` note — narrow the pattern. Use grep to search
      file contents.
    EOT
    input_schema = {
      type = "object"
      properties = {
        pattern = { type = "string", description = "Glob relative to path, e.g. **/*.go; ** spans directories." }
        path    = { type = "string", description = "Workspace-relative directory to search (default: the workspace root)." }
      }
      required             = ["pattern"]
      additionalProperties = false
    }
  }

  tool "grep" {
    risk           = "read-only"
    path_arguments = ["path"]
    description    = <<-EOT
      Search file contents in the workspace with a regular expression (RE2 syntax:
      no backreferences or lookaround), matched line by line.

      - `path`: a directory or file to search, relative to the workspace root
        (default: the root).
      - `glob`: only files matching it, e.g. `*.go` (a glob without `/` matches the
        file name at any depth) or `internal/**/*.ts`.
      - `ignore_case`: match regardless of case.
      - `context`: 0 to 5 lines shown before and after each match.
      - `max_results`: how many matching lines to show, 1 to 2000 (default 200).

      Output is one line per hit, sorted by path then line: `path:LINE:text` for a
      matching line, `path-LINE-text` for a context line, and `--` between
      non-adjacent groups. Lines longer than 500 bytes are cut. `.git`, files
      ignored by `.gitignore`, binary files and files over 2 MiB are skipped. When
      there are more hits than `max_results` (or over 256 KiB of output), the output
      ends with a `[truncated: …]` note: narrow the pattern, path or glob.
    EOT
    input_schema = {
      type = "object"
      properties = {
        pattern     = { type = "string", description = "RE2 regular expression, matched per line." }
        path        = { type = "string", description = "Workspace-relative directory or file to search (default: the workspace root)." }
        glob        = { type = "string", description = "Only files matching this glob, e.g. *.go or src/**/*.ts." }
        ignore_case = { type = "boolean" }
        context     = { type = "integer", minimum = 0, maximum = 5, description = "Lines of context around each match." }
        max_results = { type = "integer", minimum = 1, maximum = 2000, description = "Matching lines to show (default 200)." }
      }
      required             = ["pattern"]
      additionalProperties = false
    }
    # grep stops its text at 256 KiB; escaped as JSON (a tab is \t, a
    # control byte \u0001) the result can be larger than the default 1 MiB
    # stdout cap, which would fail the call instead of truncating it.
    max_output = "2MiB"
  }
}
