package dashboard

import (
	"cmp"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of a Chromium binary, or skips t when there
// is none, unless PERFBOT_REQUIRE_CHROMIUM=1 (make test, CI) makes that
// a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PERFBOT_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no chromium on PATH and PERFBOT_REQUIRE_CHROMIUM=1: install it (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium; PERFBOT_REQUIRE_CHROMIUM=1 makes this a failure)")
	return ""
}

// dumpDOM loads url in headless Chromium and returns the DOM it built.
func dumpDOM(t *testing.T, bin, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
		"--disable-extensions", "--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), "--dump-dom", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

// TestChromiumRendersTheDashboard serves the dashboard on a random port
// and loads each page in headless Chromium: the trend chart (an SVG with
// its median line and the change point's red line), the data table
// behind it, the stacked phases chart with a segment per phase and
// commit, the comparison and the job queue are in the DOM the browser
// built, and no page refers to anything off the server.
func TestChromiumRendersTheDashboard(t *testing.T) {
	bin := chromium(t)
	t.Parallel()
	srv := httptest.NewServer(newTestDashboard(t, nil))
	t.Cleanup(srv.Close)

	trendQ := query("repo", testRepo, "benchmark", bench, "phase", "msm_h", "since", "all")
	pages := map[string][]string{
		"/": {`<h2 class="repo">perfbot/prover</h2>`, `class="trend-link"`, `class="phases-link"`},
		"/trend?" + trendQ: {
			`<svg id="trend-svg"`, `stroke:#D62728`, // the change point's line
			`<table id="trend-data">`, `class="commit change-point" data-commit="` + sha(stepAt) + `"`,
			`href="https://github.com/perfbot/prover/commit/` + sha(0) + `"`,
		},
		"/phases?" + query("repo", testRepo, "benchmark", bench, "since", "all"): {
			`<svg id="phases-svg"`, `>synthesis</text>`, `>msm_h</text>`, `>other</text>`, `<table id="phases-data">`, // the legend
		},
		"/compare?" + query("repo", testRepo, "base", cmpBase, "head", cmpHead): {`class="verdict-regression"`, `data-series="` + bench + `/phase=msm_h"`},
		"/jobs": {`id="no-queue"`},
	}
	// Counts of the data behind the charts: the trend's table has a row
	// per commit and a comparison link for each but the first; the
	// stacked chart (chart.Stacked) a bar per commit and a legend swatch
	// for each part, here the first phase and "other", and a table row
	// per commit.
	counts := map[string]map[string]int{
		"/trend?" + trendQ: {`<tr class="commit`: commits, `class="compare-link"`: commits - 1},
		"/phases?" + query("repo", testRepo, "benchmark", bench, "since", "all"): {
			`fill:#1F77B4"`: commits + 1, `fill:#C7C7C7"`: commits + 1, `<tr class="commit"`: commits},
	}
	offsite := regexp.MustCompile(`(?i)<(?:script|link|img|iframe)[^>]*(?:src|href)="(?:https?:)?//`)
	for path, wants := range pages {
		// One at a time: Chromium starts faster alone than beside others
		// on a small machine.
		name := cmp.Or(strings.TrimPrefix(strings.SplitN(path, "?", 2)[0], "/"), "index")
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			dom := dumpDOM(t, bin, srv.URL+path)
			t.Logf("%d bytes of DOM in %v", len(dom), time.Since(start).Round(time.Millisecond))
			for _, w := range wants {
				if !strings.Contains(dom, w) {
					t.Errorf("the DOM lacks %s", w)
				}
			}
			for s, n := range counts[path] {
				if got := strings.Count(dom, s); got != n {
					t.Errorf("the DOM has %s %d times; want %d", s, got, n)
				}
			}
			if m := offsite.FindString(dom); m != "" {
				t.Errorf("the page loads something off the server: %s", m)
			}
		})
	}
}
