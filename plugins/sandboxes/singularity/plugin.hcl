plugin "singularity" {
  kind        = "sandbox"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-sandbox-singularity"
  components  = ["singularity"]
  description = "Runs each command in an Apptainer (or SingularityCE) container with apptainer exec: the workspace bound in, host home, tmp and environment left out, network off unless the policy allows it."
  capabilities {
    # apptainer pull fetches docker:// and other image URIs at Prepare.
    network = true
    # PATH finds apptainer; HOME holds its config and default cache; the
    # cache and tmp dirs are Apptainer's own; XDG_RUNTIME_DIR and
    # DBUS_SESSION_BUS_ADDRESS reach the systemd user session that rootless
    # cgroup limits need. None of these reaches a command (--cleanenv).
    # LANG and TERM reach a command only when the policy allowlists them.
    env = ["PATH", "HOME", "APPTAINER_CACHEDIR", "SINGULARITY_CACHEDIR", "APPTAINER_TMPDIR",
      "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "LANG", "TERM"]
  }
}
