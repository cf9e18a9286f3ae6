package fs

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/argcheck"
	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed read_file.md
var readFileDoc string

// read_file limits.
const (
	maxReadBytes = 256 << 10
	maxReadLines = 2000
)

type readFile struct{}

func (readFile) Spec() tool.Spec {
	return tool.Spec{
		Name: "read_file", Description: readFileDoc, Risk: tool.RiskReadOnly, PathArguments: []string{"path"},
		InputSchema: schema(`"path":{"type":"string","description":"Workspace-relative file path."},`+
			`"offset":{"type":"integer","minimum":1,"description":"First line to show, 1-based."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":2000,"description":"How many lines to show (default and at most 2000)."}`, "path"),
	}
}

type readArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

func (readFile) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var a readArgs
	if err := c.DecodeArguments(&a); err != nil {
		return argError(err), nil
	}
	if a.Path == "" {
		return tool.Errorf("path is required"), nil
	}
	offset, err := argcheck.Int("offset", a.Offset, 1, 1, 1<<31-1)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	limit := maxReadLines
	if a.Limit != nil {
		if *a.Limit < 1 {
			return tool.Errorf("limit must be at least 1, got %d", *a.Limit), nil
		}
		limit = min(*a.Limit, maxReadLines)
	}
	t, err := workspace.Resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	fi, err := workspace.RegularFile(t, a.Path)
	if err != nil {
		if fi == nil && workspace.IsDir(t.Abs) {
			return tool.Errorf("%v; use list_dir to see what it holds", err), nil
		}
		return tool.Errorf("%v", err), nil
	}
	f, err := os.Open(t.Abs)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", a.Path, err), nil
	}
	defer f.Close()
	return readLines(f, a.Path, fi.Size(), offset, limit)
}

// readLines numbers lines [offset, offset+limit) of r, within the byte cap.
func readLines(r io.Reader, name string, size int64, offset, limit int) (tool.Result, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(workspace.SniffBytes)
	if workspace.IsBinary(head) {
		return tool.Errorf("%s is a binary file (%d bytes); read_file shows text only", name, size), nil
	}
	if len(head) == 0 {
		return tool.Result{Content: fmt.Sprintf("%s is empty (0 bytes).", name)}, nil
	}
	var b strings.Builder
	line, shown, budget := 0, 0, maxReadBytes
	for {
		text, err := br.ReadString('\n')
		if text == "" && err != nil {
			if err != io.EOF {
				return tool.Errorf("cannot read %s: %v", name, err), nil
			}
			break
		}
		line++
		if line < offset {
			continue
		}
		if shown == limit || budget <= 0 {
			rest, err := countLines(br)
			if err != nil {
				return tool.Errorf("cannot read %s: %v", name, err), nil
			}
			more := 1 + rest
			fmt.Fprintf(&b, "[truncated: %d more lines; use offset=%d to read on]\n", more, line)
			return tool.Result{Content: workspace.ValidText(b.String())}, nil
		}
		text = strings.TrimSuffix(text, "\n")
		if len(text) > budget {
			text = fmt.Sprintf("%s… [line cut at the %d KiB output cap]", text[:budget], maxReadBytes>>10)
		}
		fmt.Fprintf(&b, "%6d\t%s\n", line, text)
		budget -= len(text) + 1
		shown++
	}
	if shown == 0 {
		return tool.Errorf("offset %d is past the end: %s has %d lines", offset, name, line), nil
	}
	return tool.Result{Content: workspace.ValidText(b.String())}, nil
}

// countLines counts the lines left in r (a last line without a newline
// counts).
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n, last := 0, byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}
