package analysis_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestBisectRenderingsMatchGolden(t *testing.T) {
	t.Parallel()
	rep := analysis.GoldenBisect()
	if rep.Probes[5].Class != analysis.ProbeBad || rep.Probes[2].Class != analysis.ProbeBad || rep.Probes[4].Class != analysis.ProbeGood || !rep.Exact() {
		t.Fatalf("the golden probes are not what the files show: %+v", rep.Probes)
	}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"bisect.md":   func(b *bytes.Buffer) error { return render.RenderBisectMarkdown(b, rep) },
		"bisect.txt":  func(b *bytes.Buffer) error { return render.RenderBisectText(b, rep) },
		"bisect.json": func(b *bytes.Buffer) error { return render.RenderBisectJSON(b, rep) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if b.String() != string(want) {
			t.Errorf("%s differs from %s (go test ./analysis -update if intended)\n--- got:\n%s", name, path, b.String())
		}
	}
}

func TestBisectReportJSONRoundTrips(t *testing.T) {
	t.Parallel()
	rep := analysis.GoldenBisect()
	var b bytes.Buffer
	if err := render.RenderBisectJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var back analysis.BisectReport
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := render.RenderBisectJSON(&again, &back); err != nil {
		t.Fatal(err)
	}
	if again.String() != b.String() || back.Good.SHA != rep.Good.SHA || back.Bad.SHA != rep.Bad.SHA {
		t.Errorf("JSON does not round-trip:\n%s\n---\n%s", b.String(), again.String())
	}
	for _, want := range []string{`"good": {`, `"first_bad": {`, `"class": "skipped"`, `"confirmed": true`, `"confirmation": {`, `"reproduce": [`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

func TestBisectMarkdownSaysWhenSkipsLeaveARange(t *testing.T) {
	t.Parallel()
	rep := analysis.GoldenBisect()
	rep.Candidates = []analysis.BisectCommit{{SHA: strings.Repeat("3", 40)}, rep.FirstBad}
	rep.Probes[3].Position = 5
	var b bytes.Buffer
	if err := render.RenderBisectMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"### perfbot bisect: the first bad commit is one of 2", "`3333333` (skipped), `5555555` (bad)", "`4444444` is the last good commit"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestBisectProgressTableShowsTheProbesSoFar(t *testing.T) {
	t.Parallel()
	rep := analysis.GoldenBisect()
	var b bytes.Buffer
	if err := render.RenderBisectProgressMarkdown(&b, rep.Probes[:4], "sec/op"); err != nil {
		t.Fatal(err)
	}
	want := "| step | commit | subject | verdict | median | runs reused + new |\n| --: | :-- | :-- | :-- | --: | --: |\n" +
		"| good | `aaaaaaa` | v1.4.0 | good end | 2.447s | 10 + 0 |\n" +
		"| bad | `bbbbbbb` | main: release prep | bad end | 2.557s | 0 + 10 |\n" +
		"| 1 | `8888888` | docs: the MSM notes | bad | 2.545s | 0 + 6 |\n" +
		"| 2 | `3333333` | build: bump gnark-crypto | skipped: build failed: exit status 1 |  | 0 + 0 |\n"
	if b.String() != want {
		t.Errorf("progress table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// A search that stopped at a probe it could not place, and one whose
// first bad commit did not show the change beside the last good one,
// never read as an exact answer: every rendering says what is known.
func TestBisectThatStoppedOrIsUnconfirmedSaysSo(t *testing.T) {
	t.Parallel()
	stopped := analysis.GoldenBisect()
	stopped.Stopped, stopped.Comparison, stopped.Confirmation, stopped.Confirmed = true, nil, nil, false
	unclear := &stopped.Probes[5]
	unclear.Class, unclear.Uncertain, unclear.Reason = analysis.ProbeUnclear, true, "at 60 rounds beside c3 and c15: not settled"
	stopped.Candidates = []analysis.BisectCommit{stopped.Probes[4].Commit, unclear.Commit, stopped.FirstBad}
	unconfirmed := analysis.GoldenBisect()
	row := *unconfirmed.Confirmation
	row.Verdict, row.Reason = analysis.VerdictNoChange, ""
	unconfirmed.Confirmation, unconfirmed.Confirmed = &row, false
	for _, tc := range []struct {
		name string
		rep  *analysis.BisectReport
		want []string
	}{
		{"stopped", stopped, []string{"The change is in one of 3 commits (a probe could not be placed)", "6666666 (unclear)", "unclear: the search stopped here"}},
		{"unconfirmed", unconfirmed, []string{"Probably 5555555", "not confirmed", "did not settle a change of"}},
	} {
		if tc.rep.Exact() {
			t.Errorf("%s: Exact() is true", tc.name)
		}
		var md, text bytes.Buffer
		if err := render.RenderBisectMarkdown(&md, tc.rep); err != nil {
			t.Fatal(err)
		}
		if err := render.RenderBisectText(&text, tc.rep); err != nil {
			t.Fatal(err)
		}
		all := render.BisectHeadline(tc.rep) + "\n" + md.String() + "\n" + text.String()
		for _, want := range tc.want {
			if !strings.Contains(all, want) {
				t.Errorf("%s: renderings lack %q:\n%s", tc.name, want, all)
			}
		}
		if strings.Contains(all, "the first bad commit is 5555555") || strings.Contains(all, "First bad commit 5555555") {
			t.Errorf("%s: renderings name the first bad commit as certain:\n%s", tc.name, all)
		}
	}
}
