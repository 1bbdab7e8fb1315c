package analysis_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestTrendJSONWritesMissingIntervalsAsNullAndReadsThemBack(t *testing.T) {
	t.Parallel()
	runs := []analysis.TrendRun{
		{Commit: analysis.Sha(0), Machine: "m", Started: analysis.TrendT0, Value: 1},
		{Commit: analysis.Sha(0), Machine: "m", Started: analysis.TrendT0.Add(time.Minute), Value: 2},
	}
	tr, err := analysis.NewTrend(analysis.TrendInput{Repo: "r", Key: analysis.TrendKey, Runs: runs}, analysis.TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.RenderTrendJSON(&b, tr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`"lo": null`, `"hi": null`, `"median": 1.5`, `"runs": 2`, `"change_points": []`, `"left_out": []`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"since"`) {
		t.Errorf("JSON of a trend of all runs has a since:\n%s", out)
	}
	var back analysis.Trend
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if c := back.Commits[0]; !math.IsInf(c.Lo, -1) || !math.IsInf(c.Hi, 1) || c.Median != 1.5 {
		t.Errorf("read back %+v, want infinite bounds and median 1.5", c)
	}
	if !strings.Contains(strings.Join(tr.Notes, " "), "1 of 1 commit has too few runs for a 95% interval of the median (at least 6 are needed)") {
		t.Errorf("notes %q: want the commit without an interval counted", tr.Notes)
	}
}

func TestRenderTrendCSVHasTheDocumentedColumns(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 5))
	tr, err := analysis.NewTrend(analysis.TrendInput{Key: analysis.TrendKey, Runs: analysis.StepRuns(r, 20, 6, "m", 1, 1.1, 10)}, analysis.TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.RenderTrendCSV(&b, tr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 21 || lines[0] != "index,commit,first_run,runs,median,lo,hi,unit,change_point,change_pct,p_value,direction" {
		t.Fatalf("CSV:\n%s\nwant the header and 20 rows", b.String())
	}
	f := strings.Split(lines[11], ",")
	if f[0] != "10" || f[1] != analysis.Sha(10) || f[2] != "2026-11-02T19:00:00Z" || f[3] != "6" || f[7] != "sec/op" ||
		f[8] != "true" || !strings.HasPrefix(f[9], "10.") && !strings.HasPrefix(f[9], "9.") || f[11] != "regression" {
		t.Errorf("row of the change point: %q", f)
	}
	if f := strings.Split(lines[1], ","); f[8] != "false" || f[9] != "" || f[10] != "" || f[11] != "" {
		t.Errorf("row of an ordinary commit: %q; want empty change columns", f)
	}
}
