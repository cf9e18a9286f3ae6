package fs

import (
	"fmt"
	"strings"
)

// unifiedDiff returns a unified diff of old → new with 3 lines of context,
// and the counts of added and removed lines.
func unifiedDiff(path, old, new string) (string, int, int) {
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	added, removed := 0, 0
	for _, op := range ops {
		switch op.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	if added == 0 && removed == 0 {
		return "", 0, 0
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run-end > 2*ctx || run == len(ops) {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String(), added, removed
}

type diffOp struct {
	kind       byte // ' ', '-', '+'
	line       string
	aPos, bPos int // 1-based line numbers in a and b before this op
}

func writeHunk(out *strings.Builder, ops []diffOp) {
	aLen, bLen := 0, 0
	for _, op := range ops {
		if op.kind != '+' {
			aLen++
		}
		if op.kind != '-' {
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", ops[0].aPos, aLen, ops[0].bPos, bLen)
	for _, op := range ops {
		out.WriteByte(op.kind)
		out.WriteString(op.line)
		out.WriteByte('\n')
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines is a line LCS diff; files too large for the table are shown
// as a whole replacement.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > 16_000_000 {
		for i, l := range a {
			ops = append(ops, diffOp{'-', l, i + 1, 1})
		}
		for j, l := range b {
			ops = append(ops, diffOp{'+', l, len(a) + 1, j + 1})
		}
		return ops
	}
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i + 1, j + 1})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, diffOp{'+', b[j], i + 1, j + 1})
			j++
		default:
			ops = append(ops, diffOp{'-', a[i], i + 1, j + 1})
			i++
		}
	}
	return ops
}
