// Package lockfile reads and writes sparrow.lock.hcl, which pins every
// installed plugin to an exact version, a publisher key and a hash per
// platform (docs/plugin-distribution.md). Writes are sorted, carry a
// header, and go through a temporary file and a rename.
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// Name is the lock file's name, beside the config that uses it.
const Name = "sparrow.lock.hcl"

const header = `# Maintained by "sparrow plugin install". Commit it: it pins every plugin
# to a version, a publisher key and a hash per platform.
`

// Entry is one locked plugin.
type Entry struct {
	Name    string
	Version string
	// Constraint is what the user asked for ("" for any version).
	Constraint string
	// Source is the mirror the plugin came from (a URL or a directory).
	Source string
	// Signer is the publisher's key ("ed25519:…"); Fingerprint is its
	// short form, for people.
	Signer      string
	Fingerprint string
	// Manifest is the SHA-256 of the signed release manifest.
	Manifest string
	// Hashes maps a platform ("linux/amd64", "wasm") to the SHA-256 of
	// the plugin's entry file on that platform.
	Hashes map[string]string
}

// File is a lock file.
type File struct {
	// Path is where it is read from and written to.
	Path    string
	Entries map[string]*Entry
}

type fileBody struct {
	Plugins []entryBody `hcl:"plugin,block"`
}

type entryBody struct {
	Name        string            `hcl:"name,label"`
	Version     string            `hcl:"version"`
	Constraint  string            `hcl:"constraint,optional"`
	Source      string            `hcl:"source"`
	Signer      string            `hcl:"signer"`
	Fingerprint string            `hcl:"fingerprint,optional"`
	Manifest    string            `hcl:"manifest"`
	Hashes      map[string]string `hcl:"hashes"`
	DefRange    hcl.Range         `hcl:",def_range"`
}

// Read parses the lock file at path; a missing file is an empty lock.
// Errors name the file, line and column.
func Read(path string) (*File, error) {
	f := &File{Path: path, Entries: map[string]*Entry{}}
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	hf, diags := hclparse.NewParser().ParseHCL(src, path)
	if diags.HasErrors() {
		return nil, diags
	}
	var body fileBody
	if diags := gohcl.DecodeBody(hf.Body, nil, &body); diags.HasErrors() {
		return nil, diags
	}
	for _, b := range body.Plugins {
		e := &Entry{Name: b.Name, Version: b.Version, Constraint: b.Constraint, Source: b.Source,
			Signer: b.Signer, Fingerprint: b.Fingerprint, Manifest: b.Manifest, Hashes: b.Hashes}
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("%s: plugin %q: %w", b.DefRange, b.Name, err)
		}
		if _, dup := f.Entries[e.Name]; dup {
			return nil, fmt.Errorf("%s: plugin %q is locked twice", b.DefRange, b.Name)
		}
		f.Entries[e.Name] = e
	}
	return f, nil
}

func (e *Entry) validate() error {
	if !plugintrust.ValidName(e.Name) {
		return fmt.Errorf("not a plugin name")
	}
	if _, err := plugintrust.ParsePublicKey(e.Signer); err != nil {
		return fmt.Errorf("signer: %w", err)
	}
	if !plugintrust.ValidHash(e.Manifest) {
		return fmt.Errorf("manifest: not a SHA-256")
	}
	if len(e.Hashes) == 0 {
		return fmt.Errorf("hashes: none listed")
	}
	for p, h := range e.Hashes {
		if !plugintrust.ValidHash(h) {
			return fmt.Errorf("hashes[%q]: not a SHA-256", p)
		}
	}
	return nil
}

// Write saves the lock file: blocks sorted by name, a fixed attribute
// order, written to a temporary file and renamed.
func (f *File) Write() error {
	out := hclwrite.NewEmptyFile()
	body := out.Body()
	names := make([]string, 0, len(f.Entries))
	for n := range f.Entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 {
			body.AppendNewline()
		}
		e := f.Entries[n]
		b := body.AppendNewBlock("plugin", []string{e.Name}).Body()
		b.SetAttributeValue("version", cty.StringVal(e.Version))
		if e.Constraint != "" {
			b.SetAttributeValue("constraint", cty.StringVal(e.Constraint))
		}
		b.SetAttributeValue("source", cty.StringVal(e.Source))
		b.SetAttributeValue("signer", cty.StringVal(e.Signer))
		b.SetAttributeValue("fingerprint", cty.StringVal(e.Fingerprint))
		b.SetAttributeValue("manifest", cty.StringVal(e.Manifest))
		hashes := map[string]cty.Value{}
		for p, h := range e.Hashes {
			hashes[p] = cty.StringVal(h)
		}
		b.SetAttributeValue("hashes", cty.MapVal(hashes))
	}
	data := append([]byte(header+"\n"), hclwrite.Format(out.Bytes())...)
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	return plugintrust.WriteFileAtomic(f.Path, data, 0o644)
}

// Hash is the locked entry hash of plugin name on platform, "" when the
// plugin or the platform is not locked.
func (f *File) Hash(name, platform string) string {
	if e := f.Entries[name]; e != nil {
		return e.Hashes[platform]
	}
	return ""
}
