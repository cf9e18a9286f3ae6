package config

// DefaultHomeDeniedPaths returns the paths under the home directory that
// no sandboxed command may read or write, relative to $HOME: credentials
// (ssh, cloud CLIs, registries, package indexes), signing keys and shell
// and REPL histories. The kernel resolves them against $HOME when a
// sandbox session opens, never against a home directory fixed at build
// time, and adds them to every policy's DenyRead. Backends with
// filesystem isolation hide them; backends without it cannot.
//
// This is the one list: docs/sandboxes.md mirrors it.
func DefaultHomeDeniedPaths() []string {
	return []string{
		".ssh",
		".aws",
		".config/gh",
		".config/gcloud",
		".azure",
		".kube",
		".docker/config.json",
		".netrc",
		".git-credentials",
		".gnupg",
		".password-store",
		".bash_history",
		".zsh_history",
		".python_history",
		".psql_history",
		".mysql_history",
		".node_repl_history",
		".npmrc",
		".pypirc",
		".gem/credentials",
		".cargo/credentials.toml",
		".terraform.d/credentials.tfrc.json",
	}
}
