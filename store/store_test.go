package store_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, sqliteDB)
}

func TestPostgres(t *testing.T) {
	storetest.Run(t, postgresDB(t))
}

func BenchmarkSQLite(b *testing.B) {
	storetest.Benchmark(b, sqliteDB)
}

func BenchmarkPostgres(b *testing.B) {
	storetest.Benchmark(b, postgresDB(b))
}

// sqliteDB returns a new SQLite file in the test's temporary directory,
// as a plain path.
func sqliteDB(tb testing.TB) string {
	return filepath.Join(tb.TempDir(), "perfbot.db")
}

// postgresDB returns a function that creates a database per test on the
// server at PERFBOT_TEST_DATABASE_URL, dropped when the test ends. Without
// the variable it skips tb, or fails it where a server is required (CI).
func postgresDB(tb testing.TB) func(testing.TB) string {
	tb.Helper()
	storetest.PostgresAdmin(tb)
	return storetest.FreshPostgres
}

func TestParseDSN(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, driver, path, display string
	}{
		{"postgres://perfbot:s3cret@db.internal:5433/perfbot?sslmode=require", "postgres", "",
			"postgres://perfbot:xxxxx@db.internal:5433/perfbot?sslmode=require"},
		{"postgresql://perfbot@db.internal/perfbot", "postgres", "", "postgresql://perfbot@db.internal/perfbot"},
		{"postgres:///perfbot?host=/run/postgresql&password=s3cret", "postgres", "",
			"postgres:///perfbot?host=%2Frun%2Fpostgresql&password=xxxxx"},
		{"sqlite:///var/lib/perfbot/perfbot.db", "sqlite", "/var/lib/perfbot/perfbot.db", "/var/lib/perfbot/perfbot.db"},
		{"sqlite://data/perfbot.db", "sqlite", filepath.Join(cwd, "data/perfbot.db"), filepath.Join(cwd, "data/perfbot.db")},
		{"/tmp/perfbot.db", "sqlite", "/tmp/perfbot.db", "/tmp/perfbot.db"},
		{"perfbot.db", "sqlite", filepath.Join(cwd, "perfbot.db"), filepath.Join(cwd, "perfbot.db")},
		{"~/perf/perfbot.db", "sqlite", filepath.Join(home, "perf/perfbot.db"), filepath.Join(home, "perf/perfbot.db")},
	} {
		d, err := store.ParseDSN(tc.in)
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", tc.in, err)
			continue
		}
		if d.Driver != tc.driver || d.Path != tc.path || d.String() != tc.display {
			t.Errorf("ParseDSN(%q) = driver %q path %q display %q, want %q %q %q",
				tc.in, d.Driver, d.Path, d.String(), tc.driver, tc.path, tc.display)
		}
		if tc.driver == "postgres" && d.Source != tc.in {
			t.Errorf("ParseDSN(%q).Source = %q, want the URL as given", tc.in, d.Source)
		}
		if tc.driver == "sqlite" && !strings.HasPrefix(d.Source, "file:"+tc.path+"?") ||
			tc.driver == "sqlite" && !strings.Contains(d.Source, "_pragma=foreign_keys(1)") {
			t.Errorf("ParseDSN(%q).Source = %q", tc.in, d.Source)
		}
	}

	// A path with URI metacharacters is escaped, and the file is created
	// where the path says.
	dir := t.TempDir()
	odd := filepath.Join(dir, "a?b#c%d", "perf bot.db")
	db, err := store.Open(context.Background(), odd, store.Options{CreateDir: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(odd); err != nil {
		t.Errorf("Open(%q) did not create that file: %v", odd, err)
	}
}

func TestParseDSNRefusesOtherForms(t *testing.T) {
	for _, in := range []string{
		"",
		"mysql://root:s3cret@localhost/perfbot",
		"sqlite://",
		"host=localhost dbname=perfbot password=s3cret",
		"postgres:perfbot",
		"postgres://u:s3cret@db.internal:port/x",
	} {
		_, err := store.ParseDSN(in)
		if err == nil {
			t.Errorf("ParseDSN(%q): no error", in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "postgres://") || !strings.Contains(msg, "sqlite://PATH") || !strings.Contains(msg, "file path") {
			t.Errorf("ParseDSN(%q) error %q does not list the accepted forms", in, msg)
		}
		if strings.Contains(msg, "s3cret") {
			t.Errorf("ParseDSN(%q) error %q shows the password", in, msg)
		}
	}
}

func TestOpenUnreachablePostgres(t *testing.T) {
	t.Parallel()
	const dsn = "postgres://perfbot:s3cret@127.0.0.1:1/perfbot?sslmode=disable&connect_timeout=2"
	_, err := store.Open(context.Background(), dsn, store.Options{})
	if err == nil {
		t.Fatal("Open of a closed port: no error")
	}
	msg := err.Error()
	for _, want := range []string{"127.0.0.1:1", "--db", "PERFBOT_DB"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "s3cret") {
		t.Errorf("error %q shows the password", msg)
	}
	t.Logf("error: %v", err)
}

func TestOpenCreatesDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x", "y", "perfbot.db")
	db, err := store.Open(context.Background(), "sqlite://"+path, store.Options{CreateDir: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.String() != path {
		t.Errorf("String() = %q, want %q", db.String(), path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/srv/data")
	if got, err := store.DefaultPath(); err != nil || got != "/srv/data/perfbot/perfbot.db" {
		t.Errorf("DefaultPath with XDG_DATA_HOME = %q, %v", got, err)
	}
	t.Setenv("XDG_DATA_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/perf")
	if got, err := store.DefaultPath(); err != nil || got != "/home/perf/.local/share/perfbot/perfbot.db" {
		t.Errorf("DefaultPath without XDG_DATA_HOME = %q, %v", got, err)
	}
}

func TestErrorsNameTheOperation(t *testing.T) {
	t.Parallel()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["save run: "] = db.SaveRun(ctx, &store.RunRecord{})
	_, checks["runs: "] = db.Runs(ctx, store.RunQuery{})
	_, checks["profiles: "] = db.Profiles(ctx, []int64{1})
	_, checks["history: "] = db.History(ctx, store.HistoryQuery{Repo: "r"})
	_, checks["trend: "] = db.Trend(ctx, "r", analysis.Key{Benchmark: "Prove", Unit: "sec/op"}, time.Time{})
	_, checks["comparison 7: "] = db.Comparison(ctx, 7)
	for prefix, err := range checks {
		if err == nil || !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("error %v, want it to start with %q", err, prefix)
		}
		if errors.Is(err, store.ErrNotFound) {
			t.Errorf("error %v on a closed database wraps ErrNotFound", err)
		}
	}
}

// TestSQLiteOpenWaitsForTheLock holds the lock another process opening or
// migrating the file would hold: Open waits for it (here until its context
// ends, saying which file it waited on), and opens once it is released.
func TestSQLiteOpenWaitsForTheLock(t *testing.T) {
	path := sqliteDB(t)
	held := flock.New(path + ".lock")
	if err := held.Lock(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	db, err := store.Open(ctx, path, store.Options{})
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded while another holder had the lock")
	}
	if !strings.Contains(err.Error(), path+".lock") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Open while locked: %v; want the lock file named and the context's deadline", err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("Open gave up after %v; want it to wait for its context (300ms)", waited)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database file exists after a refused Open (stat: %v); want nothing created", err)
	}

	released := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		held.Unlock()
		close(released)
	}()
	db, err = store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatalf("Open after the lock's release: %v", err)
	}
	defer db.Close()
	select {
	case <-released:
	default:
		t.Error("Open returned before the lock was released")
	}
	if current, latest, err := db.SchemaVersion(context.Background()); err != nil || current != latest {
		t.Errorf("SchemaVersion after Open = %d, %d, %v; want the schema migrated to the latest version", current, latest, err)
	}
}

// A SQLite path someone gave must be in a directory that exists and can
// hold files: perfbot does not make directories it was not asked to (as
// root, anywhere), and says what is wrong with the path itself rather
// than with a lock file. Only Options.CreateDir (the default database)
// creates the directory.
func TestOpenSQLiteRefusesAPathWithNoPlaceForTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "x.db"), "directory " + filepath.Join(dir, "missing") + " does not exist: create it first"},
		{filepath.Join(file, "x.db"), file + " is not a directory"},
		{"/proc/perfbot-test.db", "no file can be created in /proc"},
	} {
		db, err := store.Open(ctx, "sqlite://"+c.path, store.Options{})
		if err == nil {
			db.Close()
			t.Errorf("%s: opened", c.path)
			continue
		}
		if !errors.Is(err, store.ErrBadLocation) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "open database "+c.path) {
			t.Errorf("%s: %v; want ErrBadLocation saying %q", c.path, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the missing directory was made: %v", err)
	}
	nested := filepath.Join(dir, "a", "b", "perfbot.db")
	db, err := store.Open(ctx, nested, store.Options{CreateDir: true})
	if err != nil {
		t.Fatalf("with CreateDir: %v", err)
	}
	db.Close()
	if _, err := os.Stat(nested); err != nil {
		t.Errorf("with CreateDir the database is not there: %v", err)
	}
}
