package fs

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed read_file.md
var readFileDoc string

const (
	maxReadBytes = 256 << 10
	maxReadLines = 2000
)

type readFile struct{}

func (readFile) Spec() tool.Spec {
	return tool.Spec{Name: "read_file", Description: readFileDoc, Risk: tool.RiskReadOnly, PathArguments: []string{"path"},
		InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["path"]}`)}
}

func (readFile) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return tool.Errorf("%v", err), nil
	}
	abs, err := resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", a.Path, err), nil
	}
	if isBinary(data) {
		return tool.Errorf("%s is a binary file (%d bytes); read_file shows text only", a.Path, len(data)), nil
	}
	if len(data) == 0 {
		return tool.Result{Content: fmt.Sprintf("%s is empty.", a.Path)}, nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := max(a.Offset, 1)
	if start > len(lines) {
		return tool.Errorf("offset %d is past the end: %s has %d lines", start, a.Path, len(lines)), nil
	}
	limit := a.Limit
	if limit <= 0 || limit > maxReadLines {
		limit = maxReadLines
	}
	var b strings.Builder
	end := start - 1
	for i := start - 1; i < len(lines) && i < start-1+limit; i++ {
		if b.Len()+len(lines[i]) > maxReadBytes {
			break
		}
		fmt.Fprintf(&b, "%6d\t%s", i+1, strings.TrimSuffix(lines[i], "\n")+"\n")
		end = i + 1
	}
	if end < len(lines) {
		fmt.Fprintf(&b, "[truncated: %d more lines; read on with offset %d]\n", len(lines)-end, end+1)
	}
	return tool.Result{Content: b.String()}, nil
}
