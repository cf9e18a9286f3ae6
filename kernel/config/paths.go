package config

import (
	"os"
	"path/filepath"
)

// ProjectFileName is the project file's path relative to the project
// directory.
const ProjectFileName = ".sparrow/sparrow.hcl"

// Paths are the configuration files and the directories Sparrow keeps its
// state in. Empty strings mean "none": no HOME to fall back on, or no
// project file found.
type Paths struct {
	// UserFile is $SPARROW_CONFIG, else $XDG_CONFIG_HOME/sparrow/sparrow.hcl,
	// else $HOME/.config/sparrow/sparrow.hcl. It need not exist.
	UserFile string
	// ProjectFile is the nearest .sparrow/sparrow.hcl found walking up from
	// the workspace, stopping at the git root or the filesystem root.
	ProjectFile string
	// ProjectDir is the directory ProjectFile belongs to (the parent of
	// its .sparrow directory); it is what trusted_projects lists.
	ProjectDir string
	// DataDir holds installed plugins, skills and agents:
	// $XDG_DATA_HOME/sparrow or $HOME/.local/share/sparrow.
	DataDir string
	// StateDir holds runs and the database:
	// $XDG_STATE_HOME/sparrow or $HOME/.local/state/sparrow.
	StateDir string
	// CacheDir holds caches such as compiled WASM modules:
	// $XDG_CACHE_HOME/sparrow or $HOME/.cache/sparrow.
	CacheDir string
}

// ResolvePaths computes the configuration paths for a workspace. getenv
// supplies the environment (pass os.Getenv from main); a nil getenv is an
// empty environment. Relative XDG variables are ignored, as the XDG base
// directory specification requires.
func ResolvePaths(workspace string, getenv func(string) string) Paths {
	getenv = orEmptyEnv(getenv)
	home := getenv("HOME")
	p := Paths{
		UserFile: xdgDir(getenv, "XDG_CONFIG_HOME", home, ".config", "sparrow.hcl"),
		DataDir:  xdgDir(getenv, "XDG_DATA_HOME", home, filepath.Join(".local", "share"), ""),
		StateDir: xdgDir(getenv, "XDG_STATE_HOME", home, filepath.Join(".local", "state"), ""),
		CacheDir: xdgDir(getenv, "XDG_CACHE_HOME", home, ".cache", ""),
	}
	if f := getenv("SPARROW_CONFIG"); f != "" {
		p.UserFile = f
	}
	if workspace != "" {
		p.ProjectFile = FindProjectFile(workspace)
		p.ProjectDir = projectDir(p.ProjectFile)
	}
	return p
}

// xdgDir returns $VAR/sparrow[/file], or home/fallback/sparrow[/file] when
// VAR is unset or relative, or "" when neither is usable.
func xdgDir(getenv func(string) string, envVar, home, fallback, file string) string {
	base := getenv(envVar)
	if !filepath.IsAbs(base) {
		if home == "" {
			return ""
		}
		base = filepath.Join(home, fallback)
	}
	return filepath.Join(base, "sparrow", file)
}

// FindProjectFile walks up from dir looking for .sparrow/sparrow.hcl. It
// stops after the first directory that holds .git (the repository root)
// or at the filesystem root, and returns "" when nothing is found.
func FindProjectFile(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		candidate := filepath.Join(dir, ProjectFileName)
		if st, err := os.Stat(candidate); err == nil && st.Mode().IsRegular() {
			return candidate
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// projectDir returns the directory a project file belongs to: the parent
// of its .sparrow directory, or its own directory for a file elsewhere.
func projectDir(file string) string {
	if file == "" {
		return ""
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) == ".sparrow" {
		return filepath.Dir(dir)
	}
	return dir
}

func orEmptyEnv(getenv func(string) string) func(string) string {
	if getenv == nil {
		return func(string) string { return "" }
	}
	return getenv
}
