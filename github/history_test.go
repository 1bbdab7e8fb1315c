package github

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis/render"
)

func TestHistoryRoundTripsExactly(t *testing.T) {
	t.Parallel()
	// Entries that end in the same tags the history uses, hold Markdown,
	// HTML and non-ASCII text, must come back byte for byte.
	entries := []string{
		"### perfbot: regression\n\n<details><summary>Warnings (1)</summary>\n\n- noisy\n\n</details>",
		"plain\n\n\n</details>\n\nafter a closing tag",
		"### perfbot: no change — ±2 % «ok»\n\n```text\n</summary>\n\n```",
	}
	cur := render.SummaryMarker + "\n### perfbot: improvement\n\nnow\n"
	body := renderHistory(cur, entries)
	gotCur, gotEntries := splitHistory(body)
	if normalize(gotCur) != normalize(cur) {
		t.Errorf("current = %q, want %q", gotCur, cur)
	}
	if len(gotEntries) != len(entries) {
		t.Fatalf("%d entries back, want %d:\n%s", len(gotEntries), len(entries), body)
	}
	for i := range entries {
		if gotEntries[i] != entries[i] {
			t.Errorf("entry %d = %q, want %q", i, gotEntries[i], entries[i])
		}
	}
	// Folding the same report again changes nothing.
	if again := foldHistory(body, cur); again != body {
		t.Errorf("refolding the current report changed the body:\n%s\n---\n%s", body, again)
	}
}

func TestFoldHistoryOfACommentWithoutHistory(t *testing.T) {
	t.Parallel()
	old := render.SummaryMarker + "\n### perfbot: no change\n\nold\n"
	now := render.SummaryMarker + "\n### perfbot: regression\n\nnew\n"
	got := foldHistory(old, now)
	want := now + "\n" + historyMarker + "\n<details><summary>Earlier results (1)</summary>\n\n" +
		entryMarker + "\n<details><summary>perfbot: no change</summary>\n\n### perfbot: no change\n\nold\n\n</details>\n\n</details>\n"
	if got != want {
		t.Errorf("fold =\n%s\nwant\n%s", got, want)
	}
	// A report that only GitHub's line ends tell apart is unchanged.
	if again := foldHistory(got, strings.ReplaceAll(now, "\n", "\r\n")+"\n\n"); again != got {
		t.Errorf("a report differing only in line ends was folded again:\n%s", again)
	}
}

func TestHeadline(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"\n\n### perfbot: <b>regression</b>\nmore": "perfbot: &lt;b&gt;regression&lt;/b&gt;",
		"":                       "Earlier result",
		strings.Repeat("é", 150): strings.Repeat("é", maxHeadline-1) + "…",
	}
	for in, want := range tests {
		if got := headline(in); got != want {
			t.Errorf("headline(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFitCommentCutsOnALineAndClosesACodeBlock(t *testing.T) {
	t.Parallel()
	body := render.SummaryMarker + "\n```text\n" + strings.Repeat("0123456789\n", 7000) + "```\n"
	got := fitComment(body)
	if len(got) > maxCommentLen {
		t.Fatalf("%d bytes, over %d", len(got), maxCommentLen)
	}
	if !strings.HasPrefix(got, render.SummaryMarker+"\n```text\n0123456789\n") ||
		!strings.Contains(got, "0123456789\n```\n\n**Truncated:**") {
		t.Errorf("cut badly: ends %q", got[len(got)-200:])
	}
	if short := "short"; fitComment(short) != short {
		t.Error("a short body was changed")
	}
	// A body whose marker falls beyond the cut gets it back in front.
	tail := strings.Repeat("y", 70_000) + render.SummaryMarker
	if got := fitComment(tail); !strings.HasPrefix(got, render.SummaryMarker+"\n") || len(got) > maxCommentLen {
		t.Errorf("marker not kept: starts %q, %d bytes", got[:30], len(got))
	}
}
