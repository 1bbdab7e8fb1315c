package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/githubtest"
)

// A chaosPlan sizes a soak. PERFBOT_CHAOS=full is make chaos's (issue
// 36's figures); without it make test runs the short form.
type chaosPlan struct {
	prs, pushes int // pull requests, and pushes to each
	redeliver   float64
	workers     int
	workerKills int
	serveKills  int
	dbRestarts  int
	ghFaults    int
	drain       time.Duration // for the queue to empty after the deliveries
}

func planChaos() chaosPlan {
	if os.Getenv("PERFBOT_CHAOS") == "full" {
		return chaosPlan{prs: 110, pushes: 9, redeliver: 0.1, workers: 3, workerKills: 10, serveKills: 2, dbRestarts: 3, ghFaults: 4, drain: 6 * time.Minute}
	}
	return chaosPlan{prs: 8, pushes: 4, redeliver: 0.2, workers: 2, workerKills: 1, serveKills: 1, dbRestarts: 1, ghFaults: 1, drain: 3 * time.Minute}
}

// TestChaosSoak is issue 36's soak: perfbot serve and workers as
// processes of their own, a fake GitHub and a PostgreSQL of the test's
// own, and signed deliveries — every pull request's pushes shuffled
// together, so that pushes to one pull request race, some redelivered —
// while at random times a worker is SIGKILLed mid-job (and started
// again on its data directory), serve is SIGKILLed (and started again),
// PostgreSQL is restarted and GitHub answers 502 or 403 rate-limited for
// a while. A delivery that is not answered 2xx is resent, as GitHub's
// redelivery does. Then, once the queue is empty, it checks: every pull
// request has exactly one perfbot comment and a completed check on its
// newest head, both saying what the stored comparison of that head says;
// no job ran to completion twice; every comparison's runs come from a
// session that ended (never a killed attempt's); nothing is left running.
// It prints its figures; make chaos runs the full size.
func TestChaosSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak of processes, kills and database restarts: skipped in -short mode")
	}
	plan := planChaos()
	start := time.Now()
	// A job: 6 runs of 0.3 s. A killed worker's job is rescued 15 s after
	// it started, at the rescuer's next pass (every 30 s).
	e := startBot(t, botOptions{ownPostgres: true, serveProcess: true, noWorker: true, count: 3, sleep: "0.3",
		jobTimeout: "12s", rescueAfter: "15s"})
	rng := rand.New(rand.NewPCG(36, uint64(start.UnixNano())))
	base := e.repo.Git(t, "rev-parse", "HEAD")
	tree := e.repo.Git(t, "rev-parse", "HEAD^{tree}")

	// Each push is a commit of its own (the same tree: the comparisons are
	// A/A), reachable from GitHub's refs/pull/N/head.
	type delivery struct {
		pr, push int
		id, head string
		payload  map[string]any
	}
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	newest := map[int]string{}
	var all []delivery
	for pr := 1; pr <= plan.prs; pr++ {
		for push := range plan.pushes {
			head := e.repo.Git(t, "commit-tree", tree, "-p", base, "-m", fmt.Sprintf("pr %d push %d", pr, push))
			action := "synchronize"
			if push == 0 {
				action = "opened"
			}
			p := e.pullRequestPayload(action, pr, base, head)
			p["pull_request"].(map[string]any)["updated_at"] = t0.Add(time.Duration(push) * time.Second).Format(time.RFC3339)
			all = append(all, delivery{pr: pr, push: push, id: e.nextDelivery(), head: head, payload: p})
			newest[pr] = head
		}
		e.repo.Git(t, "update-ref", fmt.Sprintf("refs/pull/%d/head", pr), newest[pr])
		e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: base, HeadRef: "feature", HeadSHA: newest[pr]})
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for i := range all {
		if rng.Float64() < plan.redeliver {
			all = append(all, all[i]) // the same delivery again, later
		}
	}

	// The workers: processes of their own, each on its data directory.
	type worker struct {
		cmd  *exec.Cmd
		data string
	}
	workerLogs := map[string]string{}
	var logs []*syncBuffer
	startWorker := func(w *worker) {
		var log *syncBuffer
		w.cmd, log = startWorkerProcess(t, e, w.data)
		logs = append(logs, log)
	}
	workers := make([]*worker, plan.workers)
	var wmu sync.Mutex
	for i := range workers {
		w := &worker{data: t.TempDir()}
		startWorker(w)
		workers[i] = w
	}

	// The chaos events, in a random order, 0.5–3 s apart; the deliveries
	// are spread over the same time.
	events := make([]string, 0)
	for range plan.workerKills {
		events = append(events, "worker")
	}
	for range plan.serveKills {
		events = append(events, "serve")
	}
	for range plan.dbRestarts {
		events = append(events, "db")
	}
	for range plan.ghFaults {
		events = append(events, "github")
	}
	rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	pace := time.Duration(len(events)) * 1750 * time.Millisecond / time.Duration(len(all))

	// The deliveries, eight at a time, each resent until answered 2xx.
	var sent, refused, answered atomic.Int64
	deliveriesDone := make(chan struct{})
	go func() {
		defer close(deliveriesDone)
		work := make(chan delivery)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for d := range work {
					deadline := time.Now().Add(2 * time.Minute)
					for {
						sent.Add(1)
						code, _, err := postDelivery(e, d.id, d.payload)
						if err == nil && code/100 == 2 {
							answered.Add(1)
							break
						}
						refused.Add(1)
						if time.Now().After(deadline) {
							t.Errorf("delivery %s (PR %d push %d) still refused after 2 minutes: %d %v", d.id, d.pr, d.push, code, err)
							break
						}
						time.Sleep(100 * time.Millisecond)
					}
				}
			})
		}
		for _, d := range all {
			work <- d
			time.Sleep(pace)
		}
		close(work)
		wg.Wait()
	}()

	var killedMidJob int
	for _, ev := range events {
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		switch ev {
		case "worker":
			// Mid-job where one runs within 5 s: a worker that holds a
			// session (its host's worker is the only one on its data
			// directory, and sessions name their process).
			var w *worker
			for wait := time.Now().Add(5 * time.Second); w == nil && time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
				var owner string
				if e.db.QueryRow(`SELECT owner FROM sessions WHERE state = 'running' ORDER BY id DESC LIMIT 1`).Scan(&owner) != nil {
					continue
				}
				wmu.Lock()
				for _, c := range workers {
					if strings.Contains(owner, fmt.Sprintf("/%d/", c.cmd.Process.Pid)) {
						w = c
					}
				}
				wmu.Unlock()
			}
			wmu.Lock()
			if w != nil {
				killedMidJob++
			} else {
				w = workers[rng.IntN(len(workers))]
			}
			w.cmd.Process.Kill()
			w.cmd.Wait()
			time.Sleep(300 * time.Millisecond)
			startWorker(w)
			wmu.Unlock()
		case "serve":
			e.serve.Process.Kill()
			e.serve.Wait()
			time.Sleep(500 * time.Millisecond)
			e.startServe(t)
		case "db":
			e.pg.Stop()
			time.Sleep(time.Second)
			e.pg.Start()
		case "github":
			if rng.IntN(2) == 0 {
				e.gh.Fail("", "/repos/", 6, githubtest.Fault{Status: http.StatusBadGateway})
			} else {
				reset := strconv.FormatInt(time.Now().Add(2*time.Second).Unix(), 10)
				e.gh.Fail("", "/repos/", 4, githubtest.Fault{Status: http.StatusForbidden,
					Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {reset}},
					Body:   `{"message":"API rate limit exceeded"}`})
			}
		}
	}
	<-deliveriesDone
	sendTime := time.Since(start)

	// The queue empties: every pull request's newest head has its
	// completed check, and no comparison or message is left to work.
	e.waitFor(t, "every pull request's newest head to be reported and the queue to empty", plan.drain, func() bool {
		for pr := 1; pr <= plan.prs; pr++ {
			if c, _ := e.check(newest[pr]); c.Status != "completed" {
				return false
			}
		}
		var live int
		e.db.QueryRow(`SELECT count(*) FROM river_job WHERE state IN ('available', 'running', 'retryable', 'scheduled', 'pending')`).Scan(&live)
		return live == 0
	})

	// Each pull request: one comment and a completed check on its newest
	// head, saying what the stored comparison of that head says.
	stored := map[string][]string{} // head -> first lines of its stored comparisons
	rows, err := e.db.Query(`SELECT head_sha, markdown FROM comparisons`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var head, md string
		if err := rows.Scan(&head, &md); err != nil {
			t.Fatal(err)
		}
		stored[head] = append(stored[head], strings.SplitN(md, "\n", 2)[0])
	}
	rows.Close()
	for pr := 1; pr <= plan.prs; pr++ {
		head := newest[pr]
		comments := e.perfbotComments(t, pr)
		c, _ := e.check(head)
		if len(stored[head]) != 1 {
			t.Errorf("PR %d: %d stored comparisons of its newest head %.12s; want 1", pr, len(stored[head]), head)
			continue
		}
		headline := stored[head][0]
		if len(comments) != 1 || !strings.Contains(comments[0].Body, headline) || !strings.Contains(comments[0].Body, head[:7]) {
			t.Errorf("PR %d: %d perfbot comments; want one, about %.12s, saying %q", pr, len(comments), head, headline)
		}
		if c.Status != "completed" || !strings.Contains(c.Summary, headline) {
			t.Errorf("PR %d: check on %.12s %s %q; want completed, saying %q", pr, head, c.Status, c.Title, headline)
		}
	}

	// Every head pushed, not only the newest: no check left queued or in
	// progress, and none a red cross for having been superseded (it ends
	// neutral, or with its own verdict when its comparison finished first).
	seen := map[string]bool{}
	for _, d := range all {
		if seen[d.head] {
			continue
		}
		seen[d.head] = true
		c, n := e.check(d.head)
		if n > 0 && (c.Status != "completed" || c.Conclusion == "cancelled") {
			t.Errorf("PR %d push %d (%.12s): check %s %s %q; want completed, neutral and superseded, or its own verdict", d.pr, d.push, d.head, c.Status, c.Conclusion, c.Title)
		}
	}

	// No job ran to completion twice; every comparison's runs are of an
	// ended session.
	label := regexp.MustCompile(`^perfbot_compare job (\d+) attempt (\d+)$`)
	ended, abandoned := map[string]int{}, 0
	rows, err = e.db.Query(`SELECT label, state FROM sessions WHERE kind = 'compare'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var l, st string
		if err := rows.Scan(&l, &st); err != nil {
			t.Fatal(err)
		}
		m := label.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("session label %q is not a compare job's attempt", l)
			continue
		}
		switch st {
		case "ended":
			ended[m[1]]++
		case "abandoned":
			abandoned++
		}
	}
	rows.Close()
	for job, n := range ended {
		if n > 1 {
			t.Errorf("compare job %s ran to completion %d times", job, n)
		}
	}
	var inputs []string
	rows, err = e.db.Query(`SELECT inputs::text FROM comparisons`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var in string
		rows.Scan(&in)
		inputs = append(inputs, in)
	}
	rows.Close()
	for _, in := range inputs {
		var ids struct {
			Base []int64 `json:"base_runs"`
			Head []int64 `json:"head_runs"`
		}
		if err := json.Unmarshal([]byte(in), &ids); err != nil || len(ids.Base) == 0 || len(ids.Head) == 0 {
			t.Errorf("comparison inputs %s: %v; want its runs", in, err)
			continue
		}
		var bad int
		for _, id := range append(ids.Base, ids.Head...) {
			var st string
			if err := e.db.QueryRow(`SELECT coalesce(s.state, 'none') FROM runs r LEFT JOIN sessions s ON s.id = r.session_id WHERE r.id = $1`, id).Scan(&st); err != nil || st != "ended" {
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("a comparison uses %d runs not of an ended session (%s)", bad, in)
		}
	}

	// Nothing left running: no job, no benchmark process.
	var running int
	e.db.QueryRow(`SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&running)
	if running != 0 {
		t.Errorf("%d jobs still running", running)
	}
	e.waitFor(t, "no benchmark process to be left", 10*time.Second, func() bool {
		return len(processesMentioning(e.envDir)) == 0
	})

	// No secret in anything said: every worker's log (the killed ones'
	// too), serve's, the job errors, every comment and check.
	var prs []int
	shas := []string{base}
	for pr := 1; pr <= plan.prs; pr++ {
		prs = append(prs, pr)
		shas = append(shas, newest[pr])
	}
	for i, l := range logs {
		workerLogs[fmt.Sprintf("worker process %d log", i)] = l.String()
	}
	e.checkNoSecretShows(t, prs, workerLogs, shas...)

	var jobs, completed, cancelled int
	e.db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE state = 'completed'), count(*) FILTER (WHERE state = 'cancelled')
		FROM river_job WHERE kind = 'perfbot_compare'`).Scan(&jobs, &completed, &cancelled)
	t.Logf("chaos soak: %d deliveries (%d distinct, %d redelivered), %d sends, %d refused and resent; "+
		"%d comparison jobs (%d completed, %d cancelled as superseded), %d attempts abandoned; "+
		"%d worker kills (%d mid-job), %d serve kills, %d database restarts, %d GitHub fault spells; "+
		"deliveries in %s, all done in %s",
		len(all), plan.prs*plan.pushes, len(all)-plan.prs*plan.pushes, sent.Load(), refused.Load(),
		jobs, completed, cancelled, abandoned,
		plan.workerKills, killedMidJob, plan.serveKills, plan.dbRestarts, plan.ghFaults,
		sendTime.Round(time.Second), time.Since(start).Round(time.Second))
	if got := answered.Load(); got != int64(len(all)) {
		t.Errorf("%d deliveries answered 2xx; want all %d", got, len(all))
	}
}

// postDelivery signs and posts one delivery to e's perfbot serve, as
// GitHub does; unlike e.post it returns errors (serve may be down).
func postDelivery(e *botEnv, id string, payload map[string]any) (int, string, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return 0, "", err
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+"/webhook", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", sign(e.secret, body))
	client := &http.Client{Timeout: 15 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	return resp.StatusCode, "", nil
}

// processesMentioning returns the pids of the processes whose command
// line contains s (every benchmark run of a test names its envDir).
func processesMentioning(s string) []string {
	var pids []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, d.Name())
		}
	}
	return pids
}
