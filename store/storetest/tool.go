package storetest

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// callgrindRun returns an ok callgrind run of sha: one simulated count.
func callgrindRun(sha string, hour int, instructions float64) *store.RunRecord {
	r := baseline(sha, hour, sample("synthesis", "sim-instructions/op", instructions))
	r.Tool = analysis.ToolCallgrind
	return r
}

func testToolRoundTripAndHistoryKeepsTimedRunsOnly(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	timed := save(t, db, baseline(sha1, 0, sample("synthesis", "sec/op", 0.8)))
	cg := callgrindRun(sha1, 1, 3.05e7)
	cgID := save(t, db, cg)
	again := save(t, db, baseline(sha2, 2, sample("synthesis", "sec/op", 0.9)))

	rs := runs(t, db, store.RunQuery{Repo: repo})
	if got := ids(rs); !reflect.DeepEqual(got, []int64{timed, cgID, again}) {
		t.Fatalf("Runs = %v, want %v", got, []int64{timed, cgID, again})
	}
	if want := stored(*cg, cgID); !reflect.DeepEqual(rs[1], want) {
		t.Errorf("callgrind run = %+v, want %+v", rs[1], want)
	}
	if rs[0].Tool != "" || rs[2].Tool != "" {
		t.Errorf("timed runs came back with tools %q and %q, want none", rs[0].Tool, rs[2].Tool)
	}
	if run := rs[1].Run(); run.Tool != analysis.ToolCallgrind {
		t.Errorf("Run() has tool %q, want %q", run.Tool, analysis.ToolCallgrind)
	}

	// History is the timed runs' alone: a callgrind run is no noise
	// sample, not even of its own units.
	h, err := db.History(context.Background(), store.HistoryQuery{Repo: repo, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[analysis.Key][]float64{key("synthesis", "sec/op"): {0.8, 0.9}}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("History(limit 2) = %v, want the two timed runs' %v", h, want)
	}

	bad := callgrindRun(sha1, 3, 1)
	bad.Tool = "cachegrind"
	if _, err := db.SaveRun(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `unknown tool "cachegrind"`) {
		t.Errorf("SaveRun with tool cachegrind: %v, want an unknown-tool error", err)
	}
}

func testToolMigrationOnVersion3(t *testing.T, dsn string) {
	ctx := context.Background()
	migrateTo(t, dsn, 3)
	db := open(t, dsn, store.Options{NoMigrate: true})
	if _, err := raw(t, dsn).Exec(`INSERT INTO repos (name) VALUES ('old')`); err != nil {
		t.Fatal(err)
	}
	applied, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0].Version != 4 || applied[0].Name != "00004_run_tool.sql" {
		t.Fatalf("Migrate from version 3 = %+v, want 00004_run_tool.sql first", applied)
	}
	old := baseline(sha1, 0, sample("total", "sec/op", 2.5))
	id := save(t, db, old)
	cg := save(t, db, callgrindRun(sha2, 1, 42))
	rs := runs(t, db, store.RunQuery{})
	if len(rs) != 2 || rs[0].ID != id || rs[0].Tool != "" || rs[1].ID != cg || rs[1].Tool != analysis.ToolCallgrind {
		t.Errorf("after the migration: runs %+v; want a timed run and a callgrind run", rs)
	}
}
