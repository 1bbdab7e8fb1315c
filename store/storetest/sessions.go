package storetest

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store"
)

// testSessionsKeepKilledRunsOutOfReuse: runs of a session that ended,
// and runs stored without a session, are whole; runs of a running or
// abandoned session are left out of RunValues, History and
// Runs{Whole}, except the caller's own session's.
func testSessionsKeepKilledRunsOutOfReuse(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	begin := func(owner string) int64 {
		t.Helper()
		id, err := db.BeginSession(ctx, store.Session{Repo: repo, Kind: store.KindBaseline, Owner: owner, Label: "baseline job 7 attempt 1"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	ended, killed, running, own := begin("host/ns/1/1"), begin("host/ns/2/2"), begin("host/ns/3/3"), begin("host/ns/4/4")
	if err := db.EndSession(ctx, ended); err != nil {
		t.Fatal(err)
	}
	mk := func(hour int, session int64, v float64) int64 {
		r := baseline(sha1, hour, sample("total", "sec/op", v))
		r.SessionID = session
		return save(t, db, r)
	}
	legacyID := mk(0, 0, 1.0)
	endedID := mk(1, ended, 2.0)
	killedID := mk(2, killed, 3.0)
	mk(3, running, 4.0)
	mk(4, own, 5.0) // abandoned by the second sweep below

	// The sweep marks only the sessions whose owner is gone.
	gone, err := db.AbandonSessions(ctx, func(owner string) bool { return owner == "host/ns/2/2" })
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 1 || gone[0].ID != killed || gone[0].State != store.SessionAbandoned || gone[0].EndedAt.IsZero() ||
		gone[0].Label != "baseline job 7 attempt 1" || gone[0].Repo != repo {
		t.Fatalf("AbandonSessions = %+v, want session %d alone, abandoned now", gone, killed)
	}
	if again, err := db.AbandonSessions(ctx, func(string) bool { return true }); err != nil || len(again) != 2 {
		// running and own: the test's stand-ins for live processes are
		// now judged gone too; put them back below by new sessions.
		t.Fatalf("second sweep = %+v, %v; want the two still running", again, err)
	}
	s, err := db.Session(ctx, killed)
	if err != nil || s.State != store.SessionAbandoned {
		t.Fatalf("Session(%d) = %+v, %v; want abandoned", killed, s, err)
	}

	// A second round with live stand-ins: one running, one the caller's.
	running, own = begin("host/ns/5/5"), begin("host/ns/6/6")
	mk(5, running, 6.0)
	ownID := mk(6, own, 7.0)

	k := key("total", "sec/op")
	vs, err := db.RunValues(ctx, store.ValuesQuery{Repo: repo, Commits: []string{sha1}, ConfigHash: "cfg-a", Machine: "gpu-1", Key: k, Own: own})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := valuesOf(vs, sha1), []float64{1.0, 2.0, 7.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("RunValues with own session = %v, want %v (no session, ended, own; not killed 3, abandoned 4/5, running 6)", got, want)
	}
	vs, err = db.RunValues(ctx, store.ValuesQuery{Repo: repo, Commits: []string{sha1}, ConfigHash: "cfg-a", Machine: "gpu-1", Key: k})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := valuesOf(vs, sha1), []float64{1.0, 2.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("RunValues = %v, want %v", got, want)
	}
	h, err := db.History(ctx, store.HistoryQuery{Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h[k], []float64{1.0, 2.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("History = %v, want %v: a killed or unfinished session's runs are no noise history", got, want)
	}
	var ids []int64
	for _, r := range runs(t, db, store.RunQuery{Repo: repo, Whole: true, Own: own}) {
		ids = append(ids, r.ID)
	}
	if want := []int64{legacyID, endedID, ownID}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Runs{Whole, Own} = ids %v, want %v", ids, want)
	}
	// Without Whole every run is there, each with its session's state.
	all := runs(t, db, store.RunQuery{Repo: repo})
	if len(all) != 7 {
		t.Fatalf("Runs = %d runs, want all 7", len(all))
	}
	states := map[int64]store.SessionState{}
	for _, r := range all {
		states[r.ID] = r.SessionState
	}
	if states[legacyID] != "" || states[endedID] != store.SessionEnded || states[killedID] != store.SessionAbandoned || states[ownID] != store.SessionRunning {
		t.Errorf("session states of the runs = %v", states)
	}
	if all[2].SessionID != killed {
		t.Errorf("run %d has session %d, want %d", all[2].ID, all[2].SessionID, killed)
	}

	// Ending: a running session ends once; an abandoned one stays so.
	if err := db.EndSession(ctx, own); err != nil {
		t.Fatal(err)
	}
	err = db.EndSession(ctx, own)
	if !errors.Is(err, store.ErrSessionNotRunning) || !strings.Contains(err.Error(), "it is ended") {
		t.Errorf("ending an ended session: %v; want ErrSessionNotRunning saying it is ended", err)
	}
	err = db.EndSession(ctx, killed)
	if !errors.Is(err, store.ErrSessionNotRunning) || !strings.Contains(err.Error(), "it is abandoned") {
		t.Errorf("ending an abandoned session: %v; want ErrSessionNotRunning saying it is abandoned", err)
	}
	if s, _ := db.Session(ctx, killed); s.State != store.SessionAbandoned {
		t.Errorf("after EndSession the abandoned session is %s, want abandoned still", s.State)
	}
	if err := db.EndSession(ctx, 999999); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("ending an unknown session: %v; want it to wrap sql.ErrNoRows", err)
	}
	running2, err := db.RunningSessions(ctx)
	if err != nil || len(running2) != 1 || running2[0].ID != running {
		t.Errorf("RunningSessions = %+v, %v; want session %d alone", running2, err, running)
	}

	// Bad input writes nothing.
	for _, bad := range []store.Session{{Kind: store.KindBaseline}, {Repo: repo, Kind: "nightly"}} {
		if _, err := db.BeginSession(ctx, bad); err == nil {
			t.Errorf("BeginSession(%+v) took it; want an error", bad)
		}
	}
	if n := count(t, raw(t, dsn), "sessions"); n != 6 {
		t.Errorf("%d sessions stored, want the 6 begun", n)
	}
}

// testEndedSessionComparison: a retried job finds the comparison its
// earlier attempt stored in a session that ended — not one of a session
// still running or abandoned, not another job's (job 25 is not job 250),
// and none where no attempt stored one.
func testEndedSessionComparison(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	session := func(label string, end bool) int64 {
		t.Helper()
		id, err := db.BeginSession(ctx, store.Session{Repo: repo, Kind: store.KindCompare, Owner: "host/ns/9/9", Label: label})
		if err != nil {
			t.Fatal(err)
		}
		if end {
			if err := db.EndSession(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	comparison := func(session int64) int64 {
		t.Helper()
		id, err := db.SaveComparison(ctx, &store.Comparison{Repo: repo, BaseSHA: sha1, HeadSHA: sha2, Verdict: "no change", SessionID: session})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	comparison(session("perfbot_compare job 250 attempt 1", true))
	comparison(session("perfbot_compare job 25 attempt 1", false)) // killed before it ended
	want := comparison(session("perfbot_compare job 25 attempt 2", true))
	session("perfbot_compare job 25 attempt 3", true) // ended without storing one (a failure it reported)
	comparison(0)
	for prefix, wantID := range map[string]int64{
		"perfbot_compare job 25 attempt ": want,
		"perfbot_compare job 26 attempt ": 0,
		"perfbot_bisect job 25 attempt ":  0,
	} {
		got, err := db.EndedSessionComparison(ctx, prefix)
		if err != nil || got != wantID {
			t.Errorf("EndedSessionComparison(%q) = %d, %v; want %d", prefix, got, err, wantID)
		}
	}
}

// testResolveCommit: a commit's unique beginning names it, among runs'
// commits and comparisons' bases and heads of one repository; a beginning
// several share is ambiguous (naming them), one none has is not found.
func testResolveCommit(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	runSHA, baseSHA, headSHA := "abcd1111"+strings.Repeat("0", 32), "abcd2222"+strings.Repeat("0", 32), "beef3333"+strings.Repeat("0", 32)
	save(t, db, baseline(runSHA, 0, sample("total", "sec/op", 1)))
	if _, err := db.SaveComparison(ctx, &store.Comparison{Repo: repo, BaseSHA: baseSHA, HeadSHA: headSHA, Verdict: "no change"}); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string]string{"abcd1": runSHA, "abcd2": baseSHA, "beef": headSHA, runSHA: runSHA} {
		if got, err := db.ResolveCommit(ctx, repo, prefix); err != nil || got != want {
			t.Errorf("ResolveCommit(%s) = %s, %v; want %s", prefix, got, err, want)
		}
	}
	if _, err := db.ResolveCommit(ctx, repo, "abcd"); !errors.Is(err, store.ErrAmbiguous) || !strings.Contains(err.Error(), runSHA) || !strings.Contains(err.Error(), baseSHA) {
		t.Errorf("ResolveCommit(abcd) = %v; want ambiguous, naming both", err)
	}
	for _, tc := range []struct{ repo, prefix string }{{repo, "abce"}, {"/other/repo", "abcd1"}} {
		if _, err := db.ResolveCommit(ctx, tc.repo, tc.prefix); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ResolveCommit(%s in %s) = %v; want not found", tc.prefix, tc.repo, err)
		}
	}
}

// testRecentComparisons: the newest stored comparisons, newest first,
// limited, without their reports.
func testRecentComparisons(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	var ids []int64
	for i, head := range []string{sha1, sha2, sha1} {
		id, err := db.SaveComparison(ctx, &store.Comparison{Repo: repo, BaseSHA: strings.Repeat("b", 40), HeadSHA: head,
			Verdict: []string{"no change", "regression", "inconclusive"}[i], Report: `{"verdict":"x"}`, CreatedAt: t0.Add(time.Duration(i) * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	got, err := db.RecentComparisons(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != ids[2] || got[1].ID != ids[1] || got[1].Verdict != "regression" || got[1].HeadSHA != sha2 ||
		got[0].Repo != repo || got[0].Report != "" || !got[0].CreatedAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("RecentComparisons(2) = %+v; want comparisons %d then %d, newest first, without reports", got, ids[2], ids[1])
	}
}

// testPairAndCommitComparisons: every comparison of a pair, newest
// first, and the comparisons that include a commit on either side.
func testPairAndCommitComparisons(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	base := strings.Repeat("b", 40)
	save := func(b, h string, hour int) int64 {
		t.Helper()
		id, err := db.SaveComparison(ctx, &store.Comparison{Repo: repo, BaseSHA: b, HeadSHA: h, Verdict: "no change",
			Report: `{"verdict":"no change"}`, CreatedAt: t0.Add(time.Duration(hour) * time.Hour), PR: 40 + hour})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first, other, second, later := save(base, sha1, 0), save(base, sha2, 1), save(base, sha1, 2), save(sha1, sha2, 3)
	if _, err := db.SaveComparison(ctx, &store.Comparison{Repo: "elsewhere/x", BaseSHA: base, HeadSHA: sha1, CreatedAt: t0.Add(9 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ids := func(cs []store.Comparison) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	pair, err := db.PairComparisons(ctx, repo, base, sha1)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(pair); !slices.Equal(got, []int64{second, first}) || pair[0].Report != "" || pair[0].HeadSHA != sha1 || pair[0].PR != 42 || pair[1].PR != 40 {
		t.Errorf("PairComparisons = %v (%+v); want %d then %d (pull requests 42 and 40), without reports", got, pair, second, first)
	}
	withSHA1, err := db.CommitComparisons(ctx, repo, sha1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if one, err := db.Comparison(ctx, later); err != nil || one.PR != 43 {
		t.Errorf("Comparison(%d): pull request %+v, %v; want 43", later, one, err)
	}
	if got := ids(withSHA1); !slices.Equal(got, []int64{later, second, first}) {
		t.Errorf("CommitComparisons(sha1) = %v; want %v (as base or head, this repository only)", got, []int64{later, second, first})
	}
	if got, _ := db.CommitComparisons(ctx, repo, sha2, 10); !slices.Equal(ids(got), []int64{later, other}) {
		t.Errorf("CommitComparisons(sha2) = %v; want [%d %d]", ids(got), later, other)
	}
	if got, _ := db.CommitComparisons(ctx, repo, sha2, 1); !slices.Equal(ids(got), []int64{later}) {
		t.Errorf("CommitComparisons(sha2, limit 1) = %v; want [%d]", ids(got), later)
	}
}
