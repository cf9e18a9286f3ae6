package fs

import (
	"fmt"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
)

// Diff limits: beyond maxEditDistance the changed middle is shown as one
// replacement; a diff longer than maxDiffBytes is cut.
const (
	diffContext     = 3
	maxEditDistance = 1000
	maxDiffBytes    = 512 << 10
)

// op is one line of an edit script.
type op struct {
	kind byte // ' ', '-', '+'
	text string
	a, b int // 0-based indexes in the old and new lines
}

// unifiedDiff is a unified diff of old → new (3 lines of context, "\ No
// newline at end of file" where due) with the counts of added and removed
// lines. Binary content is reported, not diffed.
func unifiedDiff(rel, old, new string, created bool) (string, int, int) {
	if old == new {
		return "", 0, 0
	}
	from := "a/" + rel
	if created {
		from = "/dev/null"
	}
	header := fmt.Sprintf("--- %s\n+++ b/%s\n", from, rel)
	if workspace.IsBinary([]byte(old)) || workspace.IsBinary([]byte(new)) {
		return fmt.Sprintf("Binary files %s and b/%s differ\n", from, rel), 0, 0
	}
	a, b := splitKeep(old), splitKeep(new)
	ops := diffLines(a, b)
	added, removed := 0, 0
	for _, o := range ops {
		switch o.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	var out strings.Builder
	out.WriteString(header)
	for _, h := range groupHunks(ops) {
		if !writeHunk(&out, h) {
			out.WriteString("[diff truncated]\n")
			break
		}
	}
	return workspace.ValidText(out.String()), added, removed
}

// splitKeep splits s into lines that keep their "\n".
func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// groupHunks cuts an edit script into hunks: changes with up to
// diffContext lines around them, merged when their contexts touch.
func groupHunks(ops []op) [][]op {
	var hunks [][]op
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-diffContext, 0)
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
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		hunks = append(hunks, ops[start:end])
		i = end
	}
	return hunks
}

// writeHunk writes one hunk; false when the diff grew past maxDiffBytes
// and was cut.
func writeHunk(out *strings.Builder, h []op) bool {
	aStart, bStart, aLen, bLen := -1, -1, 0, 0
	for _, o := range h {
		if o.kind != '+' {
			if aStart < 0 {
				aStart = o.a
			}
			aLen++
		}
		if o.kind != '-' {
			if bStart < 0 {
				bStart = o.b
			}
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen, h[0].a), hunkRange(bStart, bLen, h[0].b))
	for _, o := range h {
		if out.Len() > maxDiffBytes {
			return false
		}
		out.WriteByte(o.kind)
		out.WriteString(strings.TrimSuffix(o.text, "\n"))
		out.WriteByte('\n')
		if !strings.HasSuffix(o.text, "\n") {
			out.WriteString("\\ No newline at end of file\n")
		}
	}
	return true
}

// hunkRange is "l,n" in unified-diff convention: 1-based, and the line
// before the hunk when it is empty on that side.
func hunkRange(start, n, fallback int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", fallback)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// diffLines is the edit script from a to b: common prefix and suffix
// trimmed, Myers' algorithm on the rest.
func diffLines(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]op, 0, len(a)+len(b))
	for i := 0; i < pre; i++ {
		ops = append(ops, op{' ', a[i], i, i})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre)...)
	for i := 0; i < suf; i++ {
		ai, bi := len(a)-suf+i, len(b)-suf+i
		ops = append(ops, op{' ', a[ai], ai, bi})
	}
	return ops
}

// myers is Myers' O((N+M)D) greedy diff of a and b, whose first lines sit
// at offA and offB. Beyond maxEditDistance it gives up minimality and
// replaces a with b wholesale.
func myers(a, b []string, offA, offB int) []op {
	n, m := len(a), len(b)
	maxD := min(n+m, maxEditDistance)
	v := make([]int, 2*maxD+2)
	var trace [][]int
	found := false
	for d := 0; d <= maxD && !found; d++ {
		// Round d reads diagonals -d..d of the previous round; keep
		// just those for the walk back.
		trace = append(trace, append([]int(nil), v[maxD-d:maxD+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[maxD+k-1] < v[maxD+k+1]) {
				x = v[maxD+k+1]
			} else {
				x = v[maxD+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[maxD+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	if !found {
		return replaceAll(a, b, offA, offB)
	}
	// Walk the trace back from (n, m).
	var rev []op
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		vd := trace[d] // diagonal k is vd[d+k]
		k := x - y
		var pk int
		if k == -d || (k != d && vd[d+k-1] < vd[d+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vd[d+pk]
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, op{' ', a[x], offA + x, offB + y})
		}
		if x == px {
			y--
			rev = append(rev, op{'+', b[y], offA + x, offB + y})
		} else {
			x--
			rev = append(rev, op{'-', a[x], offA + x, offB + y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{' ', a[x], offA + x, offB + y})
	}
	ops := make([]op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
}

func replaceAll(a, b []string, offA, offB int) []op {
	ops := make([]op, 0, len(a)+len(b))
	for i, l := range a {
		ops = append(ops, op{'-', l, offA + i, offB})
	}
	for j, l := range b {
		ops = append(ops, op{'+', l, offA + len(a), offB + j})
	}
	return ops
}
