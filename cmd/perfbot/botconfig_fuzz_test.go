package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/store/queue"
)

// FuzzLoadBotConfig: any server config file either loads into a config
// that keeps loadBotConfig's promises — repositories named owner/name,
// none twice, none on the control queue, a positive job timeout, a
// dashboard address, "same" only with a token, a database pool that
// can work for serve and for a worker — or is refused with an
// error that names the file; never a panic.
func FuzzLoadBotConfig(f *testing.F) {
	for _, s := range []string{
		"repos: [{name: a/b}]\n",
		"listen: ':8080'\njob_timeout: 90m\nrepos: [{name: a/b, queue: h200, drafts: true, baselines: false}]\ndashboard: {listen: same, token_env: T}\n",
		"repos: [{name: a/b}, {name: A/B}]\n",
		"repos: [{name: a/b, queue: control}]\n",
		"job_timeout: -1s\nrepos: [{name: a/b}]\n",
		"github: {app_id: 1}\nrepos: [{name: a/b}]\n",
		"repos:\n  - name: a/b\n    config:\n      benchmarks:\n        - name: x\n          command: [./x]\n",
		"repos: [{name: a/b, change_points: {report: true, window: 90d, min_change: 0.05}}]\n",
		"dashboard: {listen: same}\nrepos: [{name: a/b}]\n",
		"repos: [{name: a/b, config: nope.yml}]\n",
		"database: {max_open_conns: 8, max_idle_conns: 8, conn_max_lifetime: 30m, conn_max_idle_time: 5m}\nrepos: [{name: a/b}]\n",
		"database: {max_open_conns: 1, max_idle_conns: 0, conn_max_lifetime: 1ns}\nrepos: [{name: a/b}]\n",
		"database: {max_idle_conns: 40}\nrepos: [{name: a/b}]\n",
		"{", "repos: 3\n", "unknown: 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "server.yml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := loadBotConfig(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) || c != nil {
				t.Fatalf("error %q does not name the file %s (config %v)", err, path, c != nil)
			}
			return
		}
		if len(c.Repos) == 0 || c.jobTimeout <= 0 || c.Dashboard.Listen == "" ||
			c.Dashboard.Listen == dashboardSame && c.Dashboard.TokenEnv == "" {
			t.Fatalf("accepted %q: %d repos, job timeout %v, dashboard %+v", data, len(c.Repos), c.jobTimeout, c.Dashboard)
		}
		seen := map[string]bool{}
		for _, r := range c.Repos {
			if _, err := github.ParseRepo(r.Name); err != nil || seen[strings.ToLower(r.Name)] || r.Queue == queue.ControlQueue {
				t.Fatalf("accepted %q: repository %+v (parse %v, twice %v)", data, r.Name, err, seen[strings.ToLower(r.Name)])
			}
			seen[strings.ToLower(r.Name)] = true
		}
		for _, command := range []string{"serve", "worker"} {
			p, err := c.Database.pool(command, defaultPool(command))
			if err != nil {
				if !strings.HasPrefix(err.Error(), "database.max_idle_conns: ") {
					t.Fatalf("accepted %q, then %s's pool: %v", data, command, err)
				}
				continue
			}
			if p.MaxOpen < 2 || p.MaxIdle < 1 || p.MaxIdle > p.MaxOpen || p.MaxLifetime < 0 || p.MaxIdleTime < 0 ||
				p.MaxLifetime > 0 && p.MaxLifetime < time.Second || p.MaxIdleTime > 0 && p.MaxIdleTime < time.Second {
				t.Fatalf("accepted %q: %s's pool %+v cannot work", data, command, p)
			}
		}
	})
}
