package storetest

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// A Cluster is a PostgreSQL server of one test's own: initdb in a
// temporary directory, Unix socket only, no durability. A test that stops
// and starts the database (to check what a restart loses) uses one, since
// stopping the server make test shares would fail every other package's
// tests at the same moment. It is made from the same server binaries as
// scripts/with-postgres.sh uses, and removed when the test ends.
type Cluster struct {
	// DSN is the URL of its database perfbot_test.
	DSN string
	dir string
	bin string
	tb  testing.TB
}

// OwnPostgres starts a Cluster. Without PostgreSQL's server binaries the
// test is skipped, saying how to get them, or failed where a server is
// required (CI, or PERFBOT_REQUIRE_POSTGRES=1 as make test sets).
func OwnPostgres(tb testing.TB) *Cluster {
	tb.Helper()
	bin := serverBinaries()
	if bin == "" {
		const how = "no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql"
		if v := os.Getenv("CI"); (v != "" && v != "false" && v != "0") || os.Getenv("PERFBOT_REQUIRE_POSTGRES") == "1" {
			tb.Fatal(how + " (required: CI or PERFBOT_REQUIRE_POSTGRES=1 is set)")
		}
		tb.Skip(how)
	}
	// The socket path must stay short (about 100 bytes), and as root the
	// server runs as postgres, who must reach the directory: /tmp.
	dir, err := os.MkdirTemp("/tmp", "perfbot-own-pg.")
	if err != nil {
		tb.Fatal(err)
	}
	c := &Cluster{dir: dir, bin: bin, tb: tb}
	tb.Cleanup(func() {
		_ = c.ctl("-m", "immediate", "-w", "stop").Run() // already stopped is fine: the directory goes either way
		os.RemoveAll(dir)
	})
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Fatalf("running as root and there is no postgres user to run the server as (apt-get install postgresql creates it): %v", err)
		}
		if out, err := exec.Command("chown", u.Username+":", dir).CombinedOutput(); err != nil {
			tb.Fatalf("chown %s: %v\n%s", dir, err, out)
		}
	}
	c.run("initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	c.Start()
	c.run("createdb", "-h", dir, "-U", "postgres", "perfbot_test")
	c.DSN = "postgres:///perfbot_test?host=" + dir + "&user=postgres&sslmode=disable"
	return c
}

// Stop stops the server the way an operator's restart does (pg_ctl -m
// fast: open connections are ended, transactions in flight roll back).
func (c *Cluster) Stop() {
	c.tb.Helper()
	if out, err := c.ctl("-m", "fast", "-w", "-t", "60", "stop").CombinedOutput(); err != nil {
		c.tb.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// Start starts the server again (and first, from OwnPostgres).
func (c *Cluster) Start() {
	c.tb.Helper()
	opts := "-c listen_addresses='' -k " + c.dir + " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
	if out, err := c.ctl("-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "-o", opts, "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		c.tb.Fatalf("pg_ctl start: %v\n%s\nserver.log:\n%s", err, out, log)
	}
}

func (c *Cluster) ctl(args ...string) *exec.Cmd {
	return c.command("pg_ctl", append([]string{"-D", filepath.Join(c.dir, "data")}, args...)...)
}

func (c *Cluster) run(name string, args ...string) {
	c.tb.Helper()
	if out, err := c.command(name, args...).CombinedOutput(); err != nil {
		c.tb.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// command runs a server binary as the cluster's owner: postgres when we
// are root (PostgreSQL refuses to run as root), ourselves otherwise.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if os.Getuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// serverBinaries returns the directory of initdb and pg_ctl: the newest
// /usr/lib/postgresql/*/bin, else the one on PATH; "" for none.
func serverBinaries() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d
		}
	}
	return ""
}

// versionOf reads the major version N of /usr/lib/postgresql/N/bin (0
// for a directory not named so).
func versionOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
