package store

import (
	"strings"
	"testing"
)

// FuzzParseDSN checks ParseDSN on any address: it never panics; what it
// accepts has a driver, a source, and for SQLite an absolute path; and
// neither an accepted address's String nor any error repeats a password
// the address carried (postgres://USER:PASSWORD@…, or password=… in its
// query), so logs and messages never show one.
func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{
		"postgres://u:hunter2@db.example:5432/perfbot?sslmode=disable",
		"postgresql://u:hunter2@/perfbot?host=/run/postgresql",
		"postgres://u@h/db?password=hunter2&sslmode=require",
		"sqlite:///var/lib/perfbot/perfbot.db", "sqlite://~/x.db", "perfbot.db", "./a?b#c%d/perf bot.db",
		"host=localhost password=hunter2 dbname=x", "mysql://u:p@h/db", "", "postgres://[::1]:bad/x",
	} {
		f.Add(s, "hunter2")
	}
	f.Fuzz(func(t *testing.T, addr, secret string) {
		d, err := ParseDSN(addr)
		if len(secret) >= 4 && strings.Contains(addr, secret) && isPassword(addr, secret) {
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Fatalf("%q: the error shows the password: %v", addr, err)
			}
			if err == nil && strings.Contains(d.String(), secret) {
				t.Fatalf("%q: String() %q shows the password", addr, d.String())
			}
		}
		if err != nil {
			return
		}
		switch d.Driver {
		case DriverPostgres:
			if d.Source == "" || d.Path != "" {
				t.Fatalf("%q: postgres %+v", addr, d)
			}
		case DriverSQLite:
			if !strings.HasPrefix(d.Path, "/") || !strings.HasPrefix(d.Source, "file:") {
				t.Fatalf("%q: sqlite %+v", addr, d)
			}
		default:
			t.Fatalf("%q: driver %q", addr, d.Driver)
		}
	})
}

// isPassword reports whether secret appears in addr only as a password:
// after "USER:" in a postgres URL's user info, or as a password= value.
// The fuzzer's other strings (a host that happens to hold it) may show.
func isPassword(addr, secret string) bool {
	lower := strings.ToLower(addr)
	if !strings.HasPrefix(lower, "postgres://") && !strings.HasPrefix(lower, "postgresql://") {
		return false
	}
	rest := addr[strings.Index(addr, "://")+3:]
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if _, pass, ok := strings.Cut(rest[:at], ":"); ok && pass == secret && strings.Count(addr, secret) == 1 {
			return true
		}
	}
	return strings.Contains(addr, "password="+secret) && strings.Count(addr, secret) == 1 &&
		!strings.ContainsAny(secret, "&#=%+ ")
}
