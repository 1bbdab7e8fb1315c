package storetest

import (
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
)

// PostgresAdmin returns PERFBOT_TEST_DATABASE_URL, a server where the
// user may CREATE DATABASE. Without it the test is skipped, saying how to
// get one, or failed where a server is required (CI, or
// PERFBOT_REQUIRE_POSTGRES=1 as make test sets).
func PostgresAdmin(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv("PERFBOT_TEST_DATABASE_URL")
	if admin == "" {
		const how = "PERFBOT_TEST_DATABASE_URL is not set: run make test, or the tests under " +
			"scripts/with-postgres.sh (both start a throwaway PostgreSQL server), or point the " +
			"variable at a server where the user may CREATE DATABASE"
		if v := os.Getenv("CI"); (v != "" && v != "false" && v != "0") || os.Getenv("PERFBOT_REQUIRE_POSTGRES") == "1" {
			tb.Fatal(how + " (required: CI or PERFBOT_REQUIRE_POSTGRES=1 is set)")
		}
		tb.Skip(how)
	}
	return admin
}

// FreshPostgres creates an empty database on the test server and returns
// its URL; the database is dropped when tb ends.
func FreshPostgres(tb testing.TB) string {
	tb.Helper()
	admin := PostgresAdmin(tb)
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("PERFBOT_TEST_DATABASE_URL: %v", err)
	}
	db, err := sql.Open("postgres", admin)
	if err != nil {
		tb.Fatal(err)
	}
	name := "perfbot_test_" + strings.ToLower(rand.Text()[:12])
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		db.Close()
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		defer db.Close()
		if _, err := db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	dsn := *u
	dsn.Path = "/" + name
	return dsn.String()
}

// LimitedRole makes a PostgreSQL role that may log in and is not a
// superuser, with CONNECTION LIMIT limit, dropped when the test ends
// (after what it owns: make it before the databases it will own). It
// returns the admin connection it used, the role's name and the server's
// max_connections.
func LimitedRole(t *testing.T, limit int) (admin *sql.DB, role string, maxConns int) {
	t.Helper()
	admin, err := sql.Open("postgres", PostgresAdmin(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() }) // after the role is dropped
	if err := admin.QueryRow(`SELECT current_setting('max_connections')::int`).Scan(&maxConns); err != nil {
		t.Fatal(err)
	}
	role = "perfbot_pool_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.Exec(fmt.Sprintf(`CREATE ROLE %s LOGIN CONNECTION LIMIT %d`, role, limit)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(`DROP ROLE ` + role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	return admin, role, maxConns
}
