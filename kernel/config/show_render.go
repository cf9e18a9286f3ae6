package config

import "strings"

// showBlock is one block of Show's output: aligned attribute lines, then
// nested blocks.
type showBlock struct {
	header        string // "" for the file's root body
	headerComment string
	lines         []showLine
	blocks        []*showBlock
}

type showLine struct {
	name, value, comment string
	isComment            bool // a whole-line comment, printed as is
}

// maxValueWidth caps the column the origin comments are aligned to.
const maxValueWidth = 40

func (b *showBlock) attr(name string, v any, comment string) { b.raw(name, hclText(v), comment) }

func (b *showBlock) raw(name, value, comment string) {
	b.lines = append(b.lines, showLine{name: name, value: value, comment: comment})
}

func (b *showBlock) comment(text string) {
	b.lines = append(b.lines, showLine{comment: text, isComment: true})
}

func (b *showBlock) child(header string) *showBlock {
	c := &showBlock{header: header}
	b.blocks = append(b.blocks, c)
	return c
}

func (b *showBlock) add(c *showBlock) { b.blocks = append(b.blocks, c) }

func (b *showBlock) render(sb *strings.Builder, depth int) {
	inner := depth
	if b.header != "" {
		sb.WriteString(strings.Repeat("  ", depth) + b.header + " {")
		if b.headerComment != "" {
			sb.WriteString(" " + b.headerComment)
		}
		sb.WriteString("\n")
		inner++
	}
	b.renderLines(sb, strings.Repeat("  ", inner))
	for i, c := range b.blocks {
		if b.header == "" && (i > 0 || len(b.lines) > 0) {
			sb.WriteString("\n")
		}
		c.render(sb, inner)
	}
	if b.header != "" {
		sb.WriteString(strings.Repeat("  ", depth) + "}\n")
	}
}

func (b *showBlock) renderLines(sb *strings.Builder, indent string) {
	nameWidth, valueWidth := 0, 0
	for _, l := range b.lines {
		if !l.isComment {
			nameWidth = max(nameWidth, len(l.name))
			valueWidth = min(max(valueWidth, len(l.value)), maxValueWidth)
		}
	}
	for _, l := range b.lines {
		if l.isComment {
			sb.WriteString(indent + l.comment + "\n")
			continue
		}
		line := indent + pad(l.name, nameWidth) + " = " + l.value
		if l.comment != "" {
			line = indent + pad(l.name, nameWidth) + " = " + pad(l.value, valueWidth) + "  " + l.comment
		}
		sb.WriteString(line + "\n")
	}
}

func pad(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return s + strings.Repeat(" ", width-len(s))
}
