package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// A run's spans come back as they went in, in order, with the run (and
// through Run() to analysis); a run without spans comes back without.
func testSpansRoundTrip(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	const b = "Prove/circuit=sha256/constraints=1048576/backend=gpu"
	want := []analysis.Span{
		{Benchmark: b, Phase: "msm_h", Proof: 0, Start: 0.2, End: 0.5},
		{Benchmark: b, Phase: "msm_b2", Proof: 0, Start: 0.101, End: 0.501, Lane: "host"},
		{Benchmark: b, Phase: "msm_b2_wait", Proof: 0, Start: 0.5, End: 0.501, Waits: "msm_b2"},
		{Benchmark: b, Phase: "total", Proof: 1, Start: 0, End: 1.000000001},
	}
	r := baseline(sha1, 0, sample("total", "sec/op", 0.5))
	r.Spans = want
	with := save(t, db, r)
	without := save(t, db, baseline(sha2, 1, sample("total", "sec/op", 0.6)))

	rs := runs(t, db, store.RunQuery{Repo: repo})
	if got := ids(rs); !reflect.DeepEqual(got, []int64{with, without}) {
		t.Fatalf("Runs = %v, want %v", got, []int64{with, without})
	}
	if !reflect.DeepEqual(rs[0].Spans, want) || !reflect.DeepEqual(rs[0].Run().Spans, want) {
		t.Errorf("spans came back as %+v (Run: %+v), want %+v", rs[0].Spans, rs[0].Run().Spans, want)
	}
	if rs[1].Spans != nil {
		t.Errorf("a run saved without spans came back with %+v", rs[1].Spans)
	}
	var null int
	if err := raw(t, dsn).QueryRowContext(context.Background(), "SELECT count(*) FROM runs WHERE spans IS NULL").Scan(&null); err != nil || null != 1 {
		t.Errorf("%d runs with NULL spans (%v), want 1: the run without spans", null, err)
	}
}
