package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

// TestDatabaseSettingsReplaceTheProcessDefaults: without a database:
// block perfbot serve opens 16 connections at most and a worker 5, all
// kept idle, each closed after 5 minutes idle and replaced after 30; a
// setting replaces its default, an unset max_idle_conns follows
// max_open_conns, and 0 for a duration means never.
func TestDatabaseSettingsReplaceTheProcessDefaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		yaml, command string
		want          store.Pool
	}{
		{"", "serve", store.Pool{MaxOpen: 16, MaxIdle: 16, MaxLifetime: 30 * time.Minute, MaxIdleTime: 5 * time.Minute}},
		{"", "worker", store.Pool{MaxOpen: 5, MaxIdle: 5, MaxLifetime: 30 * time.Minute, MaxIdleTime: 5 * time.Minute}},
		{"database: {max_open_conns: 10}", "serve", store.Pool{MaxOpen: 10, MaxIdle: 10, MaxLifetime: 30 * time.Minute, MaxIdleTime: 5 * time.Minute}},
		{"database: {max_open_conns: 10}", "worker", store.Pool{MaxOpen: 10, MaxIdle: 10, MaxLifetime: 30 * time.Minute, MaxIdleTime: 5 * time.Minute}},
		{"database: {max_idle_conns: 3}", "serve", store.Pool{MaxOpen: 16, MaxIdle: 3, MaxLifetime: 30 * time.Minute, MaxIdleTime: 5 * time.Minute}},
		{"database: {max_open_conns: 40, max_idle_conns: 20, conn_max_lifetime: 1h, conn_max_idle_time: 90s}", "serve",
			store.Pool{MaxOpen: 40, MaxIdle: 20, MaxLifetime: time.Hour, MaxIdleTime: 90 * time.Second}},
		{"database: {conn_max_lifetime: '0', conn_max_idle_time: 0s}", "worker", store.Pool{MaxOpen: 5, MaxIdle: 5}},
	}
	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), "server.yml")
		write(t, path, "repos: [{name: a/b}]\n"+tc.yaml+"\n")
		c, err := loadBotConfig(path)
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		got, err := c.Database.pool(tc.command, defaultPool(tc.command))
		if err != nil || got != tc.want {
			t.Errorf("%s with %q: %+v, %v; want %+v", tc.command, tc.yaml, got, err, tc.want)
		}
	}
}

// TestServeAndWorkerRefusePoolSettingsThatCannotWork: each setting of
// the database: block that cannot work stops serve and worker at start
// with exit 2 naming it and saying what to write: negative or zero
// sizes, a max_open_conns of 1, more idle than open connections (set,
// or over the command's default), durations that are negative, not
// durations or under a second; and a max_open_conns above the server's
// max_connections, or, unset, a default above the role's CONNECTION
// LIMIT.
func TestServeAndWorkerRefusePoolSettingsThatCannotWork(t *testing.T) {
	ctx := context.Background()
	_, role, maxConns := storetest.LimitedRole(t, 3)
	dsn := storetest.FreshPostgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("user", role)
	u.RawQuery, u.User = q.Encode(), nil
	asRole := u.String()

	t.Setenv("PERFBOT_POOL_TEST_TOKEN", "ghp_x")
	t.Setenv("PERFBOT_POOL_TEST_SECRET", "s")
	cases := []struct {
		command, db, yaml, want string
	}{
		{"serve", dsn, "{max_open_conns: -3}", "database.max_open_conns: -3 is negative: give the most connections this process may open, at least 2 (default: serve 16, a worker 5)"},
		{"worker", dsn, "{max_open_conns: 0}", "database.max_open_conns: 0 would mean no limit"},
		{"serve", dsn, "{max_open_conns: 1}", "database.max_open_conns: 1 cannot work"},
		{"worker", dsn, "{max_idle_conns: -1}", "database.max_idle_conns: -1 is negative"},
		{"serve", dsn, "{max_idle_conns: 0}", "database.max_idle_conns: 0 would open a new connection for nearly every query; give at least 1"},
		{"serve", dsn, "{max_open_conns: 4, max_idle_conns: 5}", "database.max_idle_conns: 5 is more than max_open_conns 4"},
		{"serve", dsn, "{max_idle_conns: 17}", "database.max_idle_conns: 17 is more than perfbot serve's default max_open_conns 16: set max_open_conns too"},
		{"worker", dsn, "{max_idle_conns: 6}", "database.max_idle_conns: 6 is more than perfbot worker's default max_open_conns 5"},
		{"serve", dsn, "{conn_max_lifetime: -1m}", "database.conn_max_lifetime: -1m is negative"},
		{"worker", dsn, "{conn_max_lifetime: 10ms}", "database.conn_max_lifetime: 10ms would reopen connections about every query; give 1s or more, or 0 for never (default 30m)"},
		{"serve", dsn, "{conn_max_idle_time: soon}", `database.conn_max_idle_time: "soon" is not a duration such as 5m (0: never)`},
		{"serve", dsn, fmt.Sprintf("{max_open_conns: %d}", maxConns+1),
			fmt.Sprintf("database.max_open_conns: open database %s: connection pool larger than the server allows: %d open connections, and the server lets this role open %d (max_connections %d): lower it in",
				redactedDSN(t, dsn), maxConns+1, maxConns, maxConns)},
		{"worker", asRole, "{}", "database.max_open_conns (unset: perfbot worker's default 5): "},
		{"serve", asRole, "{}", "the server lets this role open 3 (the role's CONNECTION LIMIT 3): lower it in"},
	}
	for _, tc := range cases {
		conf := filepath.Join(t.TempDir(), "server.yml")
		write(t, conf, fmt.Sprintf("listen: 127.0.0.1:0\ndb: %q\ngithub: {token_env: PERFBOT_POOL_TEST_TOKEN, webhook_secret_env: PERFBOT_POOL_TEST_SECRET}\nrepos: [{name: a/b}]\ndashboard: {listen: off}\ndatabase: %s\n", tc.db, tc.yaml))
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		var errb bytes.Buffer
		args := []string{tc.command, "--config", conf}
		if tc.command == "worker" {
			args = append(args, "--data-dir", t.TempDir())
		}
		err := run(ctx, args, io.Discard, &errb)
		cancel()
		if code := exitCode(err); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s with database: %s: exit %d, stderr %q; want exit 2 saying %q", tc.command, tc.yaml, code, errb.String(), tc.want)
		}
	}
}

// redactedDSN is how store prints dsn in errors.
func redactedDSN(t *testing.T, dsn string) string {
	t.Helper()
	d, err := store.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// TestServeAndWorkerOpenTheConfiguredPool: the pool a process opens is
// the one its config asks for, read back from its own /metrics
// (go_sql_max_open_connections): serve 16 and a worker 5 by default,
// serve 7 with max_open_conns: 7.
func TestServeAndWorkerOpenTheConfiguredPool(t *testing.T) {
	dsn := storetest.FreshPostgres(t)
	t.Setenv("PERFBOT_POOL_TEST_TOKEN", "ghp_x")
	t.Setenv("PERFBOT_POOL_TEST_SECRET", "s")
	cases := []struct {
		command, database string
		want              int
	}{
		{"serve", "", 16},
		{"worker", "", 5},
		{"serve", "database: {max_open_conns: 7, max_idle_conns: 3, conn_max_lifetime: 10m, conn_max_idle_time: 1m}", 7},
	}
	for _, tc := range cases {
		addr := freeAddr(t)
		conf := filepath.Join(t.TempDir(), "server.yml")
		write(t, conf, fmt.Sprintf("listen: 127.0.0.1:0\ndb: %q\ngithub: {token_env: PERFBOT_POOL_TEST_TOKEN, webhook_secret_env: PERFBOT_POOL_TEST_SECRET}\nrepos: [{name: a/b}]\ndashboard: {listen: %q}\n%s\n", dsn, addr, tc.database))
		args := []string{tc.command, "--config", conf}
		if tc.command == "worker" {
			args = append(args, "--data-dir", t.TempDir(), "--listen", addr)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var errb syncBuffer
		wg.Go(func() {
			if err := run(ctx, args, io.Discard, &errb); err != nil && ctx.Err() == nil {
				t.Errorf("perfbot %s: %v", tc.command, err)
			}
		})
		want := fmt.Sprintf(`go_sql_max_open_connections{db_name="perfbot"} %d`, tc.want)
		var got string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			resp, err := http.Get("http://" + addr + "/metrics")
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = regexp.MustCompile(`(?m)^go_sql_max_open_connections.*$`).FindString(string(body))
			break
		}
		cancel()
		wg.Wait()
		if got != want {
			t.Errorf("%s with %q: /metrics says %q, want %q (log: %s)", tc.command, tc.database, got, want, errb.String())
		}
	}
}
