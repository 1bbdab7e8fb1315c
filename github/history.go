package github

import (
	"fmt"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/perfbot/perfbot/analysis/render"
)

// The perfbot comment is the current report, then, after historyMarker,
// a collapsed list of the reports it replaced, newest first, each after
// entryMarker in its own collapsed section:
//
//	<current report>
//
//	<!-- perfbot:history -->
//	<details><summary>Earlier results (2)</summary>
//
//	<!-- perfbot:entry -->
//	<details><summary>first line of the previous report</summary>
//
//	<previous report, without render.SummaryMarker>
//
//	</details>
//
//	<!-- perfbot:entry -->
//	...
//	</details>
//
// The markers make the fold exact when it is repeated: splitHistory gives
// back the entries composeHistory wrote, byte for byte.
const (
	historyMarker = "<!-- perfbot:history -->"
	entryMarker   = "<!-- perfbot:entry -->"

	// maxHistory is how many earlier reports the comment keeps.
	maxHistory = 10
	// maxCommentLen is GitHub's limit on a comment body, 65,536
	// characters; counted here in bytes, which is never fewer.
	maxCommentLen = 65536
	// maxHeadline bounds the summary line of an earlier entry, in runes.
	maxHeadline = 100
)

// foldHistory returns the body that replaces old, the body of perfbot's
// comment, when the report is now body: body, then old's report and
// earlier entries, newest first. An unchanged report (up to line ends
// and surrounding blank lines) gives old back, so re-running a job leaves
// the comment as it was. Beyond maxHistory
// entries, or beyond GitHub's length limit, the oldest are dropped.
func foldHistory(old, body string) string {
	cur := fitComment(body)
	oldCur, entries := splitHistory(old)
	if normalize(oldCur) == normalize(cur) {
		return old
	}
	if e := entryOf(oldCur); e != "" {
		entries = append([]string{e}, entries...)
	}
	return composeHistory(cur, entries)
}

// splitHistory splits a comment body into its current report and its
// earlier entries, newest first. A body without history (a new comment,
// or one written before history was kept) is all current report.
func splitHistory(body string) (current string, entries []string) {
	i := strings.Index(body, historyMarker)
	if i < 0 {
		return body, nil
	}
	current = strings.TrimRight(body[:i], "\n")
	parts := strings.Split(body[i+len(historyMarker):], entryMarker+"\n")
	for k, p := range parts[1:] {
		if k == len(parts)-2 {
			p = trimClose(p) // the </details> of the whole history
		}
		if j := strings.Index(p, "</summary>\n\n"); j >= 0 {
			p = p[j+len("</summary>\n\n"):]
		}
		if e := trimClose(p); e != "" {
			entries = append(entries, e)
		}
	}
	return current, entries
}

// trimClose removes one closing </details> tag at the end of s and the
// newlines around it.
func trimClose(s string) string {
	s = strings.TrimRight(s, "\n")
	s = strings.TrimSuffix(s, "</details>")
	return strings.TrimRight(s, "\n")
}

// composeHistory writes cur followed by as many of entries (newest first)
// as maxHistory and maxCommentLen allow, dropping the oldest.
func composeHistory(cur string, entries []string) string {
	entries = entries[:min(len(entries), maxHistory)]
	for n := len(entries); n > 0; n-- {
		if s := renderHistory(cur, entries[:n]); len(s) <= maxCommentLen {
			return s
		}
	}
	return cur
}

func renderHistory(cur string, entries []string) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(cur, "\n"))
	fmt.Fprintf(&b, "\n\n%s\n<details><summary>Earlier results (%d)</summary>\n\n", historyMarker, len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\n<details><summary>%s</summary>\n\n%s\n\n</details>\n\n", entryMarker, headline(e), e)
	}
	b.WriteString("</details>\n")
	return b.String()
}

// entryOf turns a replaced report into a history entry: without the
// summary marker (so the comment holds it once) and without the blank
// lines around it.
func entryOf(report string) string {
	return strings.TrimSpace(strings.Replace(report, render.SummaryMarker, "", 1))
}

// normalize is the form in which two reports are compared, so that
// GitHub's handling of line ends and trailing blank lines does not make
// an unchanged report look new.
func normalize(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// headline is the summary line of an entry: its first non-blank line,
// without Markdown heading marks, escaped for HTML and shortened.
func headline(entry string) string {
	for line := range strings.Lines(entry) {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > maxHeadline {
			line = string([]rune(line)[:maxHeadline-1]) + "…"
		}
		return html.EscapeString(line)
	}
	return "Earlier result"
}

// fitComment returns body cut to GitHub's length limit, with a note
// saying so, keeping render.SummaryMarker so the comment is found
// again. A body within the limit is returned as it is.
func fitComment(body string) string {
	if len(body) <= maxCommentLen {
		return body
	}
	note := fmt.Sprintf("\n\n**Truncated:** this report is %d bytes, over GitHub's limit of %d characters for a comment; the rest is cut.\n",
		len(body), maxCommentLen)
	marker := render.SummaryMarker + "\n"
	room := maxCommentLen - len(note) - len(marker) - len("\n```")
	cut := room
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(body[:cut], '\n'); nl > room/2 {
		cut = nl
	}
	kept := body[:cut]
	if strings.Count(kept, "```")%2 == 1 {
		kept += "\n```" // close a code block the cut left open
	}
	prefix := ""
	if !strings.Contains(kept, render.SummaryMarker) {
		prefix = marker
	}
	return prefix + kept + note
}
