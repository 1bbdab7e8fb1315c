package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

// RenderTrendText writes t for a terminal: what is charted and how, one
// aligned line per commit (index, short SHA, date of its first run, runs,
// median and the reach of its interval in compare's formats, and a marker
// on each change point), the change points, and the notes.
func RenderTrendText(w io.Writer, t *analysis.Trend) error {
	var b strings.Builder
	fmt.Fprintf(&b, "perfbot trend: %s (%s is better)\n", t.Key, t.Better)
	fmt.Fprintf(&b, "repository %s, machine %s, %s\n", t.Repo, t.Machine, sinceText(t.Since))
	order := "in the order of their first runs"
	if t.Order == analysis.OrderFirstParent {
		order = "in first-parent order of " + fmtx.ShortRev(t.Head)
	}
	fmt.Fprintf(&b, "%s %s; medians with %s intervals (benchmath, as compare)\n", fmtx.Plural(len(t.Commits), "commit"), order, analysis.FormatLevel(t.Confidence))
	d := t.Detector
	fmt.Fprintf(&b, "change points: %s, alpha %s, %d permutations, min segment %d, min change %s: %d found\n\n",
		d.Method, strconv.FormatFloat(d.Alpha, 'f', -1, 64), d.Permutations, d.MinSegment, formatFraction(d.MinChange), len(t.ChangePoints))

	s := t.Scaler()
	changes := make(map[int]analysis.TrendChange, len(t.ChangePoints))
	for _, c := range t.ChangePoints {
		changes[c.Index] = c
	}
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  #\tcommit\tfirst run\truns\tmedian\t%s CI\tchange point\n", analysis.FormatLevel(t.Confidence))
	for _, c := range t.Commits {
		mark := ""
		if ch, ok := changes[c.Index]; ok {
			mark = changeMark(ch)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%d\t%s\t%s\t%s\n", c.Index, fmtx.ShortRev(c.Commit), c.FirstRun.UTC().Format(time.DateOnly),
			c.Runs, fmtx.FormatScaled(s, c.Median, t.Unit), FormatCI(c.Summary()), mark)
	}
	tw.Flush()

	if len(t.ChangePoints) > 0 {
		b.WriteString("\nChange points\n")
		for _, ch := range t.ChangePoints {
			c := t.Commits[ch.Index]
			fmt.Fprintf(&b, "  %s (#%d, first run %s): %s → %s, %s %s, %s", fmtx.ShortRev(ch.Commit), ch.Index,
				c.FirstRun.UTC().Format(time.DateOnly), fmtx.FormatScaled(s, ch.Before, t.Unit), fmtx.FormatScaled(s, ch.After, t.Unit),
				fmtx.FormatPct(ch.ChangePct), ch.Direction, fmtx.FormatPEq(ch.PValue))
			if c.Subject != "" {
				fmt.Fprintf(&b, "  %q", c.Subject)
			}
			b.WriteString("\n")
		}
	}
	if len(t.Notes) > 0 {
		b.WriteString("\nNotes\n")
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	_, err := io.WriteString(w, trimLines(b.String()))
	return err
}

// changeMark is the change-point column of a commit's line:
// "▲ +10.0% regression, p=0.005" (▼ when the series went down).
func changeMark(ch analysis.TrendChange) string {
	arrow := "▲"
	if ch.After < ch.Before {
		arrow = "▼"
	}
	return fmt.Sprintf("%s %s %s, %s", arrow, fmtx.FormatPct(ch.ChangePct), ch.Direction, fmtx.FormatPEq(ch.PValue))
}

// sinceText describes a trend's window: "runs since 2026-10-01" or
// "runs since 2026-10-01 14:05 UTC", or "all runs".
func sinceText(since time.Time) string {
	if since.IsZero() {
		return "all runs"
	}
	since = since.UTC()
	if since.Equal(since.Truncate(24 * time.Hour)) {
		return "runs since " + since.Format(time.DateOnly)
	}
	return "runs since " + since.Format("2006-01-02 15:04 UTC")
}

// formatFraction formats a fraction as a percentage: 0.02 is "2%".
func formatFraction(f float64) string {
	return strconv.FormatFloat(f*100, 'f', -1, 64) + "%"
}

// TrendCSVHeader is the first line of RenderTrendCSV's output: one row
// per commit, in the trend's order. index is the commit's position;
// first_run is RFC 3339 in UTC; median, lo and hi are in unit, unscaled
// (lo and hi empty when there are too few runs for an interval);
// change_point is true on the first commit of a new segment, which then
// has change_pct (percent), p_value and direction ("regression",
// "improvement" or "none").
var TrendCSVHeader = []string{"index", "commit", "first_run", "runs", "median", "lo", "hi", "unit",
	"change_point", "change_pct", "p_value", "direction"}

// RenderTrendCSV writes t's commits as CSV (see TrendCSVHeader).
func RenderTrendCSV(w io.Writer, t *analysis.Trend) error {
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write(TrendCSVHeader)
	changes := make(map[int]analysis.TrendChange, len(t.ChangePoints))
	for _, c := range t.ChangePoints {
		changes[c.Index] = c
	}
	for _, c := range t.Commits {
		row := []string{strconv.Itoa(c.Index), c.Commit, c.FirstRun.UTC().Format(time.RFC3339Nano), strconv.Itoa(c.Runs),
			csvFloat(c.Median), csvFloat(c.Lo), csvFloat(c.Hi), t.Unit, "false", "", "", ""}
		if ch, ok := changes[c.Index]; ok {
			row[8], row[9], row[10], row[11] = "true", csvFloat(ch.ChangePct), csvFloat(ch.PValue), ch.Direction
		}
		cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("render trend as CSV: %w", err)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// csvFloat formats x exactly, or as "" when it is not finite.
func csvFloat(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// RenderTrendJSON writes t as indented JSON (see Trend for the fields).
func RenderTrendJSON(w io.Writer, t *analysis.Trend) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("render trend as JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
