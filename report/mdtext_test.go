package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestMarkdownText: the md format writes text, a document's or its own,
// so that CommonMark and GitHub's Markdown show it as it is: what would
// be markup, a link, an entity, emphasis or a code span is escaped, and
// what reads the same either way (an "_" inside a word, a "<" before a
// space, a backslash before a letter, as printable writes "\n") is left
// alone; at the start of a list item or a heading (mdLine), so is what
// would begin a block.
func TestMarkdownText(t *testing.T) {
	for _, tc := range []struct{ in, cell, line string }{
		{"sysA fast-nvme/1", "sysA fast-nvme/1", ""},
		{"tier2_read_bw option_1/trial_0", "tier2_read_bw option_1/trial_0", ""},
		{"P95 < 200ms, a & b, 2 > 1 - 1", "P95 < 200ms, a & b, 2 > 1 - 1", ""},
		{`x\nPASS 6/6 \x1b`, `x\nPASS 6/6 \x1b`, ""},
		{"a|b", `a\|b`, ""},
		{"<img src=x onerror=alert(1)>", `\<img src=x onerror=alert(1)>`, ""},
		{"<!-- hidden -->, </b>, <?x?>, <https://e.vil>", `\<!-- hidden -->, \</b>, \<?x?>, \<https://e.vil>`, ""},
		{"[click](https://e.vil) ![t](https://e.vil/p.png)", `\[click\](https://e.vil) !\[t\](https://e.vil/p.png)`, ""},
		{"&#x202e;&lt;&amp", `\&#x202e;\&lt;\&amp`, ""},
		{"`code` *em* **b** ~~s~~", "\\`code\\` \\*em\\* \\*\\*b\\*\\* \\~\\~s\\~\\~", ""},
		{"_it_ a_b __x__ snake_case_", `\_it\_ a_b \_\_x\_\_ snake_case\_`, ""},
		{`a\*b C:\dir \| \\`, `a\\\*b C:\dir \\\| \\\\`, ""},
		{"# big", "# big", `\# big`},
		{"- item", "- item", `\- item`},
		{"+ item", "+ item", `\+ item`},
		{"> quote", `> quote`, `\> quote`},
		{"12. item", "12. item", `12\. item`},
		{"3) item", "3) item", `3\) item`},
		{"2026 runs", "2026 runs", ""},
	} {
		if got := mdCell(tc.in); got != tc.cell {
			t.Errorf("mdCell(%q) = %q, want %q", tc.in, got, tc.cell)
		}
		want := tc.line
		if want == "" {
			want = tc.cell
		}
		if got := mdLine(tc.in); got != want {
			t.Errorf("mdLine(%q) = %q, want %q", tc.in, got, want)
		}
	}
}

// TestMarkdownHostile: the text of documents (a label, a warning) is
// shown in the md format as text, not as Markdown: no raw HTML (markup a
// renderer that passes HTML runs), no link or image (a click, a fetch),
// no entity (a character printable escaped, written as its entity), no
// heading or list of its own.
func TestMarkdownHostile(t *testing.T) {
	const label = "# <img src=x onerror=alert(1)> [c](https://e.vil) &#x202e;"
	r := build(t, goldenInputs[:2], LoadOptions{Label: label}, BuildOptions{})
	var b bytes.Buffer
	if err := Render(&b, r, "md"); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.Contains(md, "onerror=alert(1)") {
		t.Fatalf("no label in:\n%s", md)
	}
	for _, re := range []string{`(^|[^\\])<img`, `(^|[^\\])\]\(`, `(^|[^\\])&#x202e;`, `(?m)^(- |## |\| )?# <img`} {
		if m := regexp.MustCompile(re).FindString(md); m != "" {
			t.Errorf("md: %q: the label read as Markdown (%s)", m, re)
		}
	}
}
