package dashboard

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
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

// browser starts headless Chromium at 1400×1000 for t and returns its
// context, and the list of every URL a page of it requested.
func browser(t *testing.T, bin string) (context.Context, func() []string) {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	var (
		mu   sync.Mutex
		urls []string
	)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			urls = append(urls, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("enable the network domain: %v", err)
	}
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(urls) }
}

// screenshot saves the page as a PNG: under docs/screenshots when
// PERFBOT_UPDATE_SCREENSHOTS=1 (the README shows them), else in a
// temporary directory, so that taking it is tested either way.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := t.TempDir()
	if os.Getenv("PERFBOT_UPDATE_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "..", "docs", "screenshots")
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(png) < 10_000 {
		t.Errorf("screenshot %s: %d bytes; a page of the dashboard is more", name, len(png))
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserFollowsTheLinkChain loads the dashboard of a real store
// (SQLite, and PostgreSQL where there is a server) in headless Chromium
// and chases a slowdown as a maintainer would: from the front page's
// benchmark to its trend; hovering a point shows its tooltip (commit,
// subject, median and interval, runs); hovering the change point says
// so, and clicking it opens the change page, whose bisect command is the
// one to paste; from there the comparison of the two commits, and each
// commit's page. Every page is checked for its content, screenshotted at
// 1400×1000, and no request leaves the server.
func TestBrowserFollowsTheLinkChain(t *testing.T) {
	bin := chromium(t)
	t.Run("SQLite", func(t *testing.T) {
		followTheLinkChain(t, bin, testStore(t), false)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		storetest.PostgresAdmin(t)
		followTheLinkChain(t, bin, testStoreAt(t, storetest.FreshPostgres(t)), true)
	})
}

// followTheLinkChain is the walk through the pages of db's dashboard;
// withQueue adds River's job queue (PostgreSQL) with jobs of each kind,
// and the jobs page is screenshotted from it, the other pages from the
// walk without a queue.
func followTheLinkChain(t *testing.T, bin string, db *store.DB, withQueue bool) {
	cfg := Config{Store: db, Now: func() time.Time { return now }}
	if withQueue {
		q, err := queue.New(db, queue.Config{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, insert := range []func() (queue.Inserted, error){
			func() (queue.Inserted, error) {
				return q.InsertBaseline(ctx, "", queue.BaselineArgs{Repo: testRepo, SHA: sha(commits - 1)})
			},
			func() (queue.Inserted, error) {
				return q.InsertCompare(ctx, "", queue.CompareArgs{Repo: testRepo, PR: 42, BaseSHA: cmpBase, HeadSHA: cmpHead, Trigger: "synchronize"})
			},
			func() (queue.Inserted, error) {
				return q.InsertBisect(ctx, "", queue.BisectArgs{Repo: testRepo, PR: 42, Good: sha(stepAt - 1), Bad: sha(stepAt), Phase: "msm_h"})
			},
		} {
			if _, err := insert(); err != nil {
				t.Fatal(err)
			}
		}
		// The jobs were queued 30, 20 and 10 minutes before the page's now, oldest first.
		if _, err := db.SQL().ExecContext(ctx, `UPDATE river_job SET created_at = $1::timestamptz - ((SELECT max(id) FROM river_job) - id + 1) * interval '10 minutes',
			scheduled_at = $1::timestamptz - ((SELECT max(id) FROM river_job) - id + 1) * interval '10 minutes'`, now); err != nil {
			t.Fatal(err)
		}
		cfg.Jobs = func(ctx context.Context, limit int) ([]queue.Job, error) { return queue.List(ctx, db.SQL(), limit) }
		cfg.Queues = func(ctx context.Context) ([]queue.QueueStatus, error) { return queue.Statuses(ctx, db.SQL()) }
	}
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	ctx, requests := browser(t, bin)
	shot := func(name string) {
		if (name == "jobs") == withQueue {
			screenshot(t, ctx, name)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// pointAt is where commit i's point is drawn, in the page's pixels.
	pointAt := func(i int) chromedp.Action[[]float64] {
		return chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const u = window.perfbotChart; const r = u.over.getBoundingClientRect();
			return [r.left + u.valToPos(%d, "x"), r.top + u.valToPos(u.data[1][%d], "y")]; })()`, i, i))
	}

	// The front page: the benchmark's headline, its last change.
	run("open /", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`table.benchmarks`)))
	if got := text(`#recent-changes tr.change`); !strings.Contains(got, "+7.") || !strings.Contains(got, "regression") {
		t.Errorf("recent change points: %q; want total's +7.4%% regression", got)
	}
	shot("index")

	// Its trend, by the headline's link.
	run("open the trend", chromedp.Click(chromedp.CSS(`tr.benchmark a.trend-link`)),
		chromedp.WaitVisible(chromedp.CSS(`#trend-chart[data-ready="true"] canvas`)))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loc, "phase=total") {
		t.Errorf("the headline's trend link opened %s; want total's trend", loc)
	}
	hover := func(i int) string {
		t.Helper()
		xy, err := chromedp.Run(ctx, pointAt(i))
		if err != nil || len(xy) != 2 {
			t.Fatalf("find commit %d's point: %v %v", i, xy, err)
		}
		run("hover", chromedp.MouseEvent(chromedp.MouseMoved, xy[0], xy[1]), chromedp.WaitVisible(chromedp.CSS(`#trend-tooltip`)))
		return text(`#trend-tooltip`)
	}
	tip := hover(3)
	for _, want := range []string{short(sha(3)), "commit 3", "median 1.3", " [1.3", "sec/op", fmt.Sprintf("%d runs", runsPer)} {
		if !strings.Contains(tip, want) {
			t.Errorf("tooltip of commit 3 %q lacks %q", tip, want)
		}
	}
	shot("trend")
	tip = hover(stepAt)
	if !strings.Contains(tip, short(sha(stepAt))) || !strings.Contains(tip, "change point: +7.") {
		t.Errorf("tooltip of the change point: %q", tip)
	}

	// Clicking the change point opens its page: the bisect command.
	xy, err := chromedp.Run(ctx, pointAt(stepAt))
	if err != nil {
		t.Fatal(err)
	}
	run("click the change point", chromedp.MouseClickXY(xy[0], xy[1]), chromedp.WaitVisible(chromedp.CSS(`pre.bisect-command`)))
	wantCmd := "perfbot bisect --good " + sha(stepAt - 1)[:12] + " --bad " + sha(stepAt)[:12] + " --benchmark " + bench + " --phase msm_h"
	if got := text(`pre.bisect-command`); got != wantCmd {
		t.Errorf("bisect command %q; want %q", got, wantCmd)
	}
	if got := text(`#summary`); !strings.Contains(got, "msm_h +25.") {
		t.Errorf("the segments' comparison says %q; want msm_h +25%%", got)
	}
	shot("change")

	// The two commits compared, then the first bad commit's page.
	run("open the comparison", chromedp.Click(chromedp.CSS(`p a.compare-link`)), chromedp.WaitVisible(chromedp.CSS(`#summary`)))
	if got := text(`#summary`); !strings.HasPrefix(got, "Inconclusive") && !strings.HasPrefix(got, "Regression") {
		t.Errorf("comparison of the two commits: %q", got)
	}
	run("open the head's page", chromedp.Click(chromedp.CSS(`p.muted a.commit-link:nth-of-type(2)`)), chromedp.WaitVisible(chromedp.CSS(`#commit-runs`)))
	if got := text(`h1`); !strings.Contains(got, "commit 15") {
		t.Errorf("commit page heading %q; want commit 15's subject", got)
	}
	shot("commit")

	// A stored comparison's page, with its attribution, and the stacked
	// phases.
	run("open a comparison", chromedp.Navigate(srv.URL+"/compare?"+query("repo", testRepo, "base", cmpBase[:8], "head", cmpHead[:8])),
		chromedp.WaitVisible(chromedp.CSS(`#attribution`)))
	if got := text(`.sharebar`); !strings.Contains(got, "msm_h") {
		t.Errorf("attribution bar %q lacks msm_h", got)
	}
	run("open the other units", chromedp.Click(chromedp.CSS(`#other-units summary`)))
	shot("compare")
	run("open the phases", chromedp.Navigate(srv.URL+"/phases?"+query("repo", testRepo, "benchmark", bench, "since", "all")),
		chromedp.WaitVisible(chromedp.CSS(`#phases-chart svg`)))
	shot("phases")
	if withQueue {
		run("open the jobs", chromedp.Navigate(srv.URL+"/jobs"), chromedp.WaitVisible(chromedp.CSS(`#jobs-queued`)))
		if got := text(`#jobs-queued`); !strings.Contains(got, testRepo+"#42 head "+short(cmpHead)+" against "+short(cmpBase)) ||
			!strings.Contains(got, "bisect "+short(sha(stepAt-1))+".."+short(sha(stepAt))) {
			t.Errorf("queued jobs: %q; want the comparison of #42 and the bisection", got)
		}
		shot("jobs")
	} else {
		run("open the jobs", chromedp.Navigate(srv.URL+"/jobs"), chromedp.WaitVisible(chromedp.CSS(`#no-queue`)))
	}

	// Nothing but the server was asked for anything.
	reqs := requests()
	if len(reqs) < 10 {
		t.Errorf("only %d requests seen: %v", len(reqs), reqs)
	}
	for _, u := range reqs {
		if !strings.HasPrefix(u, srv.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("a page asked for %s, off the server", u)
		}
	}
}
