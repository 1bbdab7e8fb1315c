package store

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// The database drivers a DSN selects.
const (
	DriverPostgres = "postgres" // github.com/lib/pq
	DriverSQLite   = "sqlite"   // modernc.org/sqlite
)

// acceptedForms is what every DSN error lists.
const acceptedForms = "postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?PARAMS], postgresql://…, sqlite://PATH or a plain file path"

// sqliteParams are the connection settings of every SQLite database:
// foreign keys on, wait up to 5 s for a lock, write-ahead log (readers do
// not block the writer), fsync at checkpoints only (safe in WAL mode), and
// write transactions that take the write lock at BEGIN, so concurrent
// writers queue under busy_timeout instead of failing to upgrade a read
// lock.
const sqliteParams = "_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"

// A DSN is a parsed database address.
type DSN struct {
	// Driver is DriverPostgres or DriverSQLite.
	Driver string
	// Source is what sql.Open takes for Driver: the postgres URL as
	// given, or a "file:" URI with perfbot's SQLite settings.
	Source string
	// Path is the SQLite database file, absolute; "" for Postgres.
	Path string

	display string // Source or Path with any password replaced
}

// ParseDSN parses a database address: postgres://… or postgresql://…
// (lib/pq's URL form), sqlite://PATH, or a plain file path (SQLite).
// A leading ~/ in a path is the home directory; a relative path is made
// absolute.
func ParseDSN(s string) (DSN, error) {
	if s == "" {
		return DSN{}, fmt.Errorf("empty database address: use %s", acceptedForms)
	}
	scheme, rest, ok := splitScheme(s)
	if !ok {
		if looksLikeKeyValue(s) {
			return DSN{}, fmt.Errorf("database address looks like a libpq key=value string: use %s", acceptedForms)
		}
		return sqliteDSN(s)
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		return postgresDSN(s)
	case "sqlite", "sqlite3":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return DSN{}, fmt.Errorf("database address %s:// has no file path: use %s", scheme, acceptedForms)
		}
		return sqliteDSN(path)
	default:
		// Only the scheme: the rest may hold a password.
		return DSN{}, fmt.Errorf("unsupported database %q: use %s", scheme+"://…", acceptedForms)
	}
}

// String returns the address for messages and logs: the postgres URL with
// its password replaced by xxxxx, or the SQLite file path.
func (d DSN) String() string { return d.display }

// host returns where a postgres DSN connects ("host:port", or a socket
// directory), for messages; "" for SQLite.
func (d DSN) host() string {
	if d.Driver != DriverPostgres {
		return ""
	}
	u, err := url.Parse(d.Source)
	if err != nil {
		return ""
	}
	host := u.Host
	if h := u.Query().Get("host"); h != "" {
		host = h
	}
	if host == "" {
		host = "localhost"
	}
	if p := u.Query().Get("port"); p != "" && !strings.Contains(host, ":") {
		host += ":" + p
	}
	return host
}

// DefaultPath returns where the SQLite database lives when no address is
// given: perfbot/perfbot.db under $XDG_DATA_HOME, or under
// ~/.local/share when that is unset (or not absolute, as the XDG spec
// requires).
func DefaultPath() (string, error) {
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "perfbot", "perfbot.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default database path: %w (set --db or PERFBOT_DB)", err)
	}
	return filepath.Join(home, ".local", "share", "perfbot", "perfbot.db"), nil
}

// splitScheme splits "scheme:rest" where scheme looks like a URL scheme
// of at least two characters (so that C:\x is not one).
func splitScheme(s string) (scheme, rest string, ok bool) {
	i := strings.IndexByte(s, ':')
	if i < 2 {
		return "", "", false
	}
	for j, c := range s[:i] {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return "", "", false
		}
	}
	return s[:i], s[i+1:], true
}

func looksLikeKeyValue(s string) bool {
	for _, k := range []string{"host=", "dbname=", "user=", "password="} {
		if strings.HasPrefix(s, k) || strings.Contains(s, " "+k) {
			return true
		}
	}
	return false
}

func postgresDSN(s string) (DSN, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Error quotes the whole address, password included: report
		// only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return DSN{}, fmt.Errorf("invalid postgres address: %v (use %s)", err, acceptedForms)
	}
	if u.Opaque != "" {
		return DSN{}, fmt.Errorf("invalid postgres address: want %s://… with two slashes (use %s)", u.Scheme, acceptedForms)
	}
	return DSN{Driver: DriverPostgres, Source: s, display: redact(u)}, nil
}

// redact returns u with its password, in the user part or a password
// parameter, replaced by xxxxx.
func redact(u *url.URL) string {
	r := *u
	if r.User != nil {
		if _, has := r.User.Password(); has {
			r.User = url.UserPassword(r.User.Username(), "xxxxx")
		}
	}
	if q := r.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		r.RawQuery = q.Encode()
	}
	return r.String()
}

func sqliteDSN(path string) (DSN, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return DSN{}, fmt.Errorf("database path %s: %w", path, err)
		}
		path = filepath.Join(home, rest)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return DSN{}, fmt.Errorf("database path %s: %w", path, err)
	}
	// SQLite decodes %HH in a file: URI and ends the path at ? or #.
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
	return DSN{
		Driver:  DriverSQLite,
		Source:  "file:" + esc + "?" + sqliteParams,
		Path:    abs,
		display: abs,
	}, nil
}
