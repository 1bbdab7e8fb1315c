package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

// fillCopyStore stores 3 baseline runs of 500 samples each (two commits),
// one of them with a CPU profile, and a comparison of the two commits.
func fillCopyStore(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 250000, time.UTC)
	for i := range 3 {
		start := t0.Add(time.Duration(i) * time.Hour)
		r := &store.RunRecord{
			Repo: "github.com/o/prover", Commit: store.Commit{SHA: fmt.Sprintf("%040x", 1+i/2), AuthorTime: start, Subject: "msm: fewer buckets"},
			Kind: store.KindBaseline, ConfigHash: "cfg", Machine: "gpu-1", Env: `{"gpu": "H200"}`,
			StartedAt: start, EndedAt: start.Add(time.Minute), Status: analysis.StatusOK,
		}
		for j := range 500 {
			r.Samples = append(r.Samples, analysis.Sample{Key: analysis.Key{Benchmark: "Prove/circuit=sha256", Phase: []string{"msm_h", "total"}[j%2], Unit: "sec/op"},
				Value: 1 + float64(i)/10 + float64(j)/1e6})
		}
		if i == 2 {
			r.Profiles = []analysis.Profile{{Benchmark: "prove", Kind: analysis.ProfileCPU, Data: []byte("\x1f\x8b a profile")}}
		}
		if _, err := db.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SaveComparison(ctx, &store.Comparison{
		Repo: "github.com/o/prover", BaseSHA: fmt.Sprintf("%040x", 1), HeadSHA: fmt.Sprintf("%040x", 2), CreatedAt: t0.Add(3 * time.Hour),
		Verdict: "regression", Inputs: `{"base_runs":[1,2],"head_runs":[3]}`, Report: `{"verdict": "regression"}`, Markdown: "msm_h +4.2%",
	}); err != nil {
		t.Fatal(err)
	}
}

// readRuns returns the runs of a store without their ids.
func readRuns(t *testing.T, dsn string) []store.RunRecord {
	t.Helper()
	db, err := store.Open(context.Background(), dsn, store.Options{NoMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs(context.Background(), store.RunQuery{Profiles: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range runs {
		runs[i].ID = 0
	}
	return runs
}

const copyFirstOutput = `repos: 1 copied, 0 already there
commits: 2 copied, 0 already there
sessions: 0 copied, 0 already there
runs: 3 copied, 0 already there
samples: 1,500 copied, 0 already there
profiles: 1 copied, 0 already there
comparisons: 1 copied, 0 already there
reported changes: 0 copied, 0 already there
copied SRC to DST (counts checked)
`

const copyAgainOutput = `repos: 0 copied, 1 already there
commits: 0 copied, 2 already there
sessions: 0 copied, 0 already there
runs: 0 copied, 3 already there
samples: 0 copied, 1,500 already there
profiles: 0 copied, 1 already there
comparisons: 0 copied, 1 already there
reported changes: 0 copied, 0 already there
nothing to copy: DST already holds everything in SRC (counts checked)
`

// testCopyCommand copies a SQLite store to dst with perfbot copy, twice:
// the first prints what it copied, the second that there was nothing to
// copy; both sides read back the same runs, and --quiet prints nothing
// on stderr.
func testCopyCommand(t *testing.T, dst, dstShown string) {
	src := filepath.Join(t.TempDir(), "perfbot.db")
	fillCopyStore(t, src)
	subst := strings.NewReplacer("SRC", src, "DST", dstShown)

	out, errOut, code := perfbot(t, "copy", "--from", src, "--to", dst)
	if code != 0 {
		t.Fatalf("perfbot copy: exit %d, stderr:\n%s", code, errOut)
	}
	if want := subst.Replace(copyFirstOutput); out != want {
		t.Errorf("perfbot copy printed:\n%s\nwant:\n%s", out, want)
	}
	want := readRuns(t, src)
	if got := readRuns(t, dst); !reflect.DeepEqual(got, want) || len(got) != 3 {
		t.Errorf("the destination's runs differ from the source's:\n got %+v\nwant %+v", got, want)
	}

	out, errOut, code = perfbot(t, "copy", "--from", "sqlite://"+src, "--to", dst, "--quiet")
	if code != 0 {
		t.Fatalf("perfbot copy again: exit %d, stderr:\n%s", code, errOut)
	}
	if want := subst.Replace(copyAgainOutput); out != want {
		t.Errorf("perfbot copy again printed:\n%s\nwant:\n%s", out, want)
	}
	if errOut != "" {
		t.Errorf("perfbot copy --quiet wrote on stderr: %q", errOut)
	}
	if got := readRuns(t, src); !reflect.DeepEqual(got, want) {
		t.Errorf("the source changed: %+v", got)
	}
}

func TestCopyCommandSQLiteToSQLitePrintsEachTableAndSecondRunCopiesNothing(t *testing.T) {
	t.Parallel()
	dst := filepath.Join(t.TempDir(), "copy.db")
	testCopyCommand(t, dst, dst)
}

func TestCopyCommandSQLiteToPostgresPrintsEachTableAndSecondRunCopiesNothing(t *testing.T) {
	t.Parallel()
	dst := storetest.FreshPostgres(t)
	d, err := store.ParseDSN(dst)
	if err != nil {
		t.Fatal(err)
	}
	testCopyCommand(t, dst, d.String())
}

// TestCopyCommandBadInputExitsTwo: missing flags, addresses that do not
// parse, a missing source (not created), one store on both sides, a
// source at an older schema and a destination in a missing directory exit
// 2 saying what to fix, with nothing on stdout.
func TestCopyCommandBadInputExitsTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "perfbot.db")
	fillCopyStore(t, src)
	if err := os.Symlink(src, filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "old.db")
	db, err := store.Open(context.Background(), old, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, latest, err := db.SchemaVersion(context.Background())
	if err == nil {
		_, err = db.SQL().Exec(`DELETE FROM goose_db_version WHERE version_id = ?`, latest)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "none.db")
	dst := filepath.Join(dir, "dst.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"copy"}, "--from and --to are required"},
		{[]string{"copy", "--from", src}, "--to is required"},
		{[]string{"copy", "--to", dst}, "--from is required"},
		{[]string{"copy", "--from", src, "--to", "mysql://db/perfbot"}, `--to: unsupported database "mysql://…"`},
		{[]string{"copy", "--from", "host=db dbname=perfbot", "--to", dst}, "--from: database address looks like a libpq key=value string"},
		{[]string{"copy", "--from", "postgres://db/perfbot", "--to", "sqlite://"}, "--to: database address sqlite:// has no file path"},
		{[]string{"copy", "--from", missing, "--to", dst}, "--from: no database at " + missing},
		{[]string{"copy", "--from", dir, "--to", dst}, "--from: " + dir + " is a directory"},
		{[]string{"copy", "--from", src, "--to", "sqlite://" + src}, "--from and --to are the same database (" + src + ")"},
		{[]string{"copy", "--from", src, "--to", filepath.Join(dir, "link.db")}, "are the same database"},
		{[]string{"copy", "--from", "postgres://u:pw@db.internal/perfbot", "--to", "postgresql://db.internal:5432/perfbot?user=u"}, "are the same database"},
		{[]string{"copy", "--from", old, "--to", dst}, fmt.Sprintf("has schema version %d and this perfbot copies %d; copy reads the source only, so upgrade it first: perfbot migrate --db %s", latest-1, latest, old)},
		{[]string{"copy", "--from", src, "--to", filepath.Join(dir, "no", "such", "dir", "copy.db")}, "--to: open database " + filepath.Join(dir, "no", "such", "dir", "copy.db") + ": no place for a database: directory " + filepath.Join(dir, "no", "such", "dir") + " does not exist"},
		{[]string{"copy", "--from", src, "--to", dst, "extra"}, "takes no arguments"},
	} {
		out, errOut, code := perfbot(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "--help' for usage") {
			t.Errorf("%v: exit %d, stderr %q; want 2 saying %q", tc.args, code, errOut, tc.want)
		}
		if out != "" {
			t.Errorf("%v: wrote %q on stdout; want nothing", tc.args, out)
		}
	}
	for _, p := range []string{missing, dst} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("bad input made %s (%v)", p, err)
		}
	}
}

// TestCopyCommandUnreachableDestinationExitsOne: a PostgreSQL server that
// does not answer is no usage error: exit 1 with the driver's error, the
// address, and nothing copied or printed on stdout.
func TestCopyCommandUnreachableDestinationExitsOne(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "perfbot.db")
	fillCopyStore(t, src)
	out, errOut, code := perfbot(t, "copy", "--from", src, "--to", "postgres://perfbot:s3cret@127.0.0.1:1/perfbot?sslmode=disable")
	if code != exitCannotRun || !strings.Contains(errOut, "--to: open database postgres://perfbot:xxxxx@127.0.0.1:1/perfbot") ||
		!strings.Contains(errOut, "cannot connect to 127.0.0.1:1") || !strings.Contains(errOut, "connection refused") {
		t.Errorf("exit %d, stderr %q; want 1 naming the address and the driver's error", code, errOut)
	}
	if strings.Contains(errOut, "s3cret") || out != "" {
		t.Errorf("stdout %q, stderr %q: want nothing on stdout and no password", out, errOut)
	}
}

// TestCopyCommandCountMismatchExitsOneNamingTheTable: a run the
// destination has with other samples is left as it is, and the count
// check fails the copy, naming samples and both numbers.
func TestCopyCommandCountMismatchExitsOneNamingTheTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "perfbot.db"), filepath.Join(dir, "copy.db")
	fillCopyStore(t, src)
	db, err := store.Open(context.Background(), dst, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 6, 9, 0, 0, 250000, time.UTC) // the first run's key, one sample
	_, err = db.SaveRun(context.Background(), &store.RunRecord{
		Repo: "github.com/o/prover", Commit: store.Commit{SHA: fmt.Sprintf("%040x", 1)}, Kind: store.KindBaseline,
		ConfigHash: "cfg", Machine: "gpu-1", StartedAt: start, Status: analysis.StatusOK,
		Samples: []analysis.Sample{{Key: analysis.Key{Benchmark: "Prove/circuit=sha256", Phase: "total", Unit: "sec/op"}, Value: 1}},
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := perfbot(t, "copy", "--from", src, "--to", dst)
	if code != exitCannotRun || !strings.Contains(errOut, "counts differ: samples: the source has 1500, the destination 1001 of them") {
		t.Errorf("exit %d, stderr %q; want 1 naming samples and both numbers", code, errOut)
	}
	if !strings.Contains(out, "runs: 2 copied, 1 already there\n") || strings.Contains(out, "counts checked") {
		t.Errorf("stdout %q; want what was copied, and no claim that the counts were checked", out)
	}
}

func TestCopyProgressSaysHowFarEveryFewSeconds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	progress := copyProgress(&b, func() time.Time { return now })
	s := store.CopyStats{
		Runs:            store.TableCount{Table: "runs", Source: 12345, Copied: 1000, Present: 234},
		Samples:         store.TableCount{Table: "samples", Source: 6172500, Copied: 500000, Present: 117000},
		ReportedChanges: store.TableCount{Table: "reported_changes", Source: 3},
		Sessions:        store.TableCount{Table: "sessions"},
	}
	progress(s)
	now = now.Add(copyProgressEvery - time.Millisecond)
	progress(s)
	if b.Len() != 0 {
		t.Fatalf("progress within %v of the start: %q", copyProgressEvery, b.String())
	}
	now = now.Add(time.Millisecond)
	progress(s)
	progress(s)
	if want := "copy: runs 1,234/12,345, samples 617,000/6,172,500, reported changes 0/3\n"; b.String() != want {
		t.Errorf("progress = %q, want %q", b.String(), want)
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 100000: "100,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
