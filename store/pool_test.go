package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

// holdAndRelease takes n connections from db at once (each pinged, so
// each is really open), then returns them all.
func holdAndRelease(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	ctx := context.Background()
	conns := make([]*sql.Conn, 0, n)
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
}

// waitFor polls cond every 50 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOpenSizesThePostgreSQLPoolAsTold: store.Open applies Options.Pool
// to the pool the store and the job queue share. With MaxOpen 6 and
// MaxIdle 3, six connections can be held and a seventh waits; returned,
// three stay open and three are closed; idle past MaxIdleTime (1 s)
// they close too, and past MaxLifetime (1 s) a connection is closed
// where MaxIdle would keep it. Without a Pool, database/sql's defaults hold: no limit,
// two kept idle (issue 45's burst of 8 closed six connections of every
// eight it opened).
func TestOpenSizesThePostgreSQLPoolAsTold(t *testing.T) {
	ctx := context.Background()
	open := func(p store.Pool) *sql.DB {
		t.Helper()
		db, err := store.Open(ctx, storetest.FreshPostgres(t), store.Options{Pool: p})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db.SQL()
	}

	db := open(store.Pool{MaxOpen: 6, MaxIdle: 3, MaxIdleTime: time.Second})
	if got := db.Stats().MaxOpenConnections; got != 6 {
		t.Errorf("MaxOpenConnections = %d, want 6", got)
	}
	before := db.Stats()
	conns := make([]*sql.Conn, 0, 6)
	for range 6 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	if c, err := db.Conn(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a seventh connection with six held: %v, want it to wait (deadline exceeded)", err)
		if c != nil {
			c.Close()
		}
	}
	cancel()
	for _, c := range conns {
		c.Close()
	}
	s := db.Stats()
	if s.OpenConnections != 3 || s.Idle != 3 || s.MaxIdleClosed-before.MaxIdleClosed != 3 || s.WaitCount-before.WaitCount != 1 {
		t.Errorf("six returned: %d open, %d idle, %d closed beyond MaxIdle, %d waits; want 3, 3, 3, 1",
			s.OpenConnections, s.Idle, s.MaxIdleClosed-before.MaxIdleClosed, s.WaitCount-before.WaitCount)
	}
	waitFor(t, "the idle connections outlived MaxIdleTime 1s", func() bool {
		s := db.Stats()
		return s.OpenConnections == 0 && s.MaxIdleTimeClosed-before.MaxIdleTimeClosed >= 3
	})

	// Connections left from the migrations may age out meanwhile, so
	// only the end is certain: all four closed for their age, none
	// for being idle.
	aged := open(store.Pool{MaxOpen: 4, MaxIdle: 4, MaxLifetime: time.Second})
	before = aged.Stats()
	holdAndRelease(t, aged, 4)
	waitFor(t, "the connections outlived MaxLifetime 1s", func() bool {
		s := aged.Stats()
		return s.OpenConnections == 0 && s.MaxLifetimeClosed-before.MaxLifetimeClosed >= 4 && s.MaxIdleClosed == before.MaxIdleClosed
	})

	plain := open(store.Pool{})
	before = plain.Stats()
	holdAndRelease(t, plain, 8)
	if s := plain.Stats(); s.MaxOpenConnections != 0 || s.Idle != 2 || s.MaxIdleClosed-before.MaxIdleClosed != 6 {
		t.Errorf("no Pool, eight returned: limit %d, %d idle, %d closed beyond MaxIdle; want database/sql's defaults: 0 (none), 2, 6",
			s.MaxOpenConnections, s.Idle, s.MaxIdleClosed-before.MaxIdleClosed)
	}
}

// TestOpenRefusesAPoolThatCannotWork: negative sizes and times, a
// MaxOpen of 1 (migrations need two connections) and more idle than
// open connections are refused before connecting; a MaxOpen above the
// server's max_connections, or above the role's or the database's
// CONNECTION LIMIT, is refused with ErrPoolTooLarge naming the limit.
// At the limit it opens.
func TestOpenRefusesAPoolThatCannotWork(t *testing.T) {
	ctx := context.Background()
	// A role that is not a superuser, with a connection limit of 5,
	// made before the database it will own.
	admin, role, maxConns := storetest.LimitedRole(t, 5)
	dsn := storetest.FreshPostgres(t)

	for _, tc := range []struct {
		pool store.Pool
		want string
	}{
		{store.Pool{MaxOpen: -1}, "MaxOpen -1 is negative"},
		{store.Pool{MaxOpen: 1}, "MaxOpen 1 cannot work"},
		{store.Pool{MaxIdle: -2}, "MaxIdle -2 is negative"},
		{store.Pool{MaxOpen: 4, MaxIdle: 5}, "MaxIdle 5 is more than MaxOpen 4"},
		{store.Pool{MaxLifetime: -time.Second}, "MaxLifetime -1s is negative"},
		{store.Pool{MaxIdleTime: -time.Minute}, "MaxIdleTime -1m0s is negative"},
	} {
		db, err := store.Open(ctx, dsn, store.Options{Pool: tc.pool})
		if err == nil {
			db.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want an error saying %q", tc.pool, err, tc.want)
		}
	}

	// The test server's superuser: max_connections alone.
	db, err := store.Open(ctx, dsn, store.Options{Pool: store.Pool{MaxOpen: maxConns + 1}})
	if err == nil {
		db.Close()
	}
	if want := fmt.Sprintf("%d open connections, and the server lets this role open %d (max_connections %d)", maxConns+1, maxConns, maxConns); !errors.Is(err, store.ErrPoolTooLarge) || !strings.Contains(err.Error(), want) {
		t.Errorf("MaxOpen max_connections+1: %v; want ErrPoolTooLarge saying %q", err, want)
	}

	// The role owns the database, so that it may migrate it.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, `ALTER DATABASE `+strings.TrimPrefix(u.Path, "/")+` OWNER TO `+role); err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("user", role)
	u.RawQuery, u.User = q.Encode(), nil
	asRole := u.String()
	db, err = store.Open(ctx, asRole, store.Options{Pool: store.Pool{MaxOpen: 6}})
	if err == nil {
		db.Close()
	}
	if want := "lets this role open 5 (the role's CONNECTION LIMIT 5)"; !errors.Is(err, store.ErrPoolTooLarge) || !strings.Contains(err.Error(), want) {
		t.Errorf("MaxOpen 6 for a role limited to 5: %v; want ErrPoolTooLarge saying %q", err, want)
	}
	db, err = store.Open(ctx, asRole, store.Options{Pool: store.Pool{MaxOpen: 5}})
	if err != nil {
		t.Fatalf("MaxOpen 5 for a role limited to 5: %v", err)
	}
	db.Close()
	if _, err := admin.ExecContext(ctx, `ALTER DATABASE `+strings.TrimPrefix(u.Path, "/")+` CONNECTION LIMIT 3`); err != nil {
		t.Fatal(err)
	}
	db, err = store.Open(ctx, asRole, store.Options{Pool: store.Pool{MaxOpen: 4}})
	if err == nil {
		db.Close()
	}
	if want := "lets this role open 3 (the database's CONNECTION LIMIT 3)"; !errors.Is(err, store.ErrPoolTooLarge) || !strings.Contains(err.Error(), want) {
		t.Errorf("MaxOpen 4 on a database limited to 3: %v; want ErrPoolTooLarge saying %q", err, want)
	}
}

// TestSQLiteKeepsItsPoolWhateverPoolSays: a SQLite file is perfbot
// compare's, where Options.Pool does not apply.
func TestSQLiteKeepsItsPoolWhateverPoolSays(t *testing.T) {
	t.Parallel()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfbot.db"), store.Options{Pool: store.Pool{MaxOpen: 1, MaxIdle: 9}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.SQL().Stats().MaxOpenConnections; got != 0 {
		t.Errorf("MaxOpenConnections = %d, want database/sql's default 0", got)
	}
}
