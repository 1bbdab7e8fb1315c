package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// botConfig is the configuration file of perfbot serve and perfbot worker
// (--config): where GitHub is and how to authenticate, and which
// repositories perfbot serves. Secrets never appear in it: it names the
// environment variables (or the key file) that hold them.
type botConfig struct {
	Listen     string       `yaml:"listen"`
	DB         string       `yaml:"db"`
	PublicURL  string       `yaml:"public_url"`
	JobTimeout string       `yaml:"job_timeout"`
	GitHub     githubConfig `yaml:"github"`
	Repos      []repoConfig `yaml:"repos"`
	// Dashboard is where perfbot serve's pages, their JSON API, the job
	// list and /metrics are served, apart from the webhook.
	Dashboard dashboardConfig `yaml:"dashboard"`
	// Database sizes each process's connection pool to db.
	Database databaseConfig `yaml:"database"`

	jobTimeout time.Duration
}

// databaseConfig sizes the connection pool of one process — perfbot
// serve, or one worker — to PostgreSQL (store.Pool); River's queue
// shares it. A setting left out takes the process's default: serve's
// server.DefaultPool (16 open, for 8 webhook deliveries, 4 control jobs
// and River's own 4), a worker's queue.Pool(1) (5: its one job and
// River's 4); both keep every connection when idle, close one idle for
// 5 minutes and replace each after 30. The limits are per process: serve's
// and every worker's together must stay below the server's
// max_connections, which each process checks its own against at start.
type databaseConfig struct {
	MaxOpenConns    *int   `yaml:"max_open_conns"`
	MaxIdleConns    *int   `yaml:"max_idle_conns"`
	ConnMaxLifetime string `yaml:"conn_max_lifetime"`
	ConnMaxIdleTime string `yaml:"conn_max_idle_time"`

	lifetime, idleTime *time.Duration
}

// defaultPool is the connection pool of perfbot command, serve or
// worker, when the config's database: block sets nothing.
func defaultPool(command string) store.Pool {
	if command == "serve" {
		return server.DefaultPool()
	}
	return queue.Pool(workerJobs)
}

// check checks each setting on its own and parses the durations; pool
// checks them together with the process's defaults.
func (d *databaseConfig) check() []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	defaults := fmt.Sprintf("default: serve %d, a worker %d", defaultPool("serve").MaxOpen, defaultPool("worker").MaxOpen)
	if n := d.MaxOpenConns; n != nil {
		switch {
		case *n < 0:
			bad("database.max_open_conns: %d is negative: give the most connections this process may open, at least 2 (%s)", *n, defaults)
		case *n == 0:
			bad("database.max_open_conns: 0 would mean no limit: give the most connections this process may open, at least 2 (%s)", defaults)
		case *n == 1:
			bad("database.max_open_conns: 1 cannot work: migrations hold one connection for their lock while they apply on another; give at least 2")
		}
	}
	if n := d.MaxIdleConns; n != nil {
		switch {
		case *n < 0:
			bad("database.max_idle_conns: %d is negative: give how many connections stay open between queries, at least 1 (default: max_open_conns)", *n)
		case *n == 0:
			bad("database.max_idle_conns: 0 would open a new connection for nearly every query; give at least 1 (default: max_open_conns)")
		case d.MaxOpenConns != nil && *d.MaxOpenConns > 1 && *n > *d.MaxOpenConns:
			bad("database.max_idle_conns: %d is more than max_open_conns %d: at most max_open_conns connections can be idle", *n, *d.MaxOpenConns)
		}
	}
	duration := func(key, value, def string) *time.Duration {
		if value == "" {
			return nil
		}
		v, err := time.ParseDuration(value)
		switch {
		case err != nil:
			bad("database.%s: %q is not a duration such as %s (0: never)", key, value, def)
		case v < 0:
			bad("database.%s: %s is negative: give a duration such as %s, or 0 for never", key, value, def)
		case v > 0 && v < time.Second:
			bad("database.%s: %s would reopen connections about every query; give 1s or more, or 0 for never (default %s)", key, value, def)
		default:
			return &v
		}
		return nil
	}
	d.lifetime = duration("conn_max_lifetime", d.ConnMaxLifetime, "30m")
	d.idleTime = duration("conn_max_idle_time", d.ConnMaxIdleTime, "5m")
	return problems
}

// pool returns the connection pool of perfbot command (serve or worker):
// def, the command's default, with the config's settings in place of its
// own. An unset max_idle_conns follows max_open_conns.
func (d *databaseConfig) pool(command string, def store.Pool) (store.Pool, error) {
	p := def
	if d.MaxOpenConns != nil {
		p.MaxOpen, p.MaxIdle = *d.MaxOpenConns, *d.MaxOpenConns
	}
	if d.MaxIdleConns != nil {
		p.MaxIdle = *d.MaxIdleConns
		if d.MaxOpenConns == nil && p.MaxIdle > p.MaxOpen {
			return p, fmt.Errorf("database.max_idle_conns: %d is more than perfbot %s's default max_open_conns %d: set max_open_conns too", p.MaxIdle, command, p.MaxOpen)
		}
	}
	if d.lifetime != nil {
		p.MaxLifetime = *d.lifetime
	}
	if d.idleTime != nil {
		p.MaxIdleTime = *d.idleTime
	}
	return p, nil
}

// dashboardConfig keeps what perfbot serve shows (its pages, /api/,
// /jobs — repositories, pull requests and who asked — and /metrics) off
// the webhook's port, which must face GitHub: by default on a loopback
// address of its own, without a token.
type dashboardConfig struct {
	// Listen is the dashboard's own address (default 127.0.0.1:8081);
	// "same" serves it on listen beside the webhook, which needs a token;
	// "off" serves no dashboard and no /metrics.
	Listen string `yaml:"listen"`
	// TokenEnv names the environment variable holding a token that every
	// dashboard and /metrics request must carry (Authorization: Bearer
	// TOKEN, or basic auth with the token as password, which browsers
	// ask for). Unset: no token.
	TokenEnv string `yaml:"token_env"`
}

const (
	defaultDashboardListen = "127.0.0.1:8081"
	dashboardSame          = "same"
	dashboardOff           = "off"
)

type githubConfig struct {
	APIURL           string `yaml:"api_url"`
	TokenEnv         string `yaml:"token_env"`
	AppID            int64  `yaml:"app_id"`
	InstallationID   int64  `yaml:"installation_id"`
	PrivateKeyFile   string `yaml:"private_key_file"`
	WebhookSecretEnv string `yaml:"webhook_secret_env"`
	CheckName        string `yaml:"check_name"`
	DryRun           bool   `yaml:"dry_run"`
}

type repoConfig struct {
	Name      string `yaml:"name"`
	CloneURL  string `yaml:"clone_url"`
	Queue     string `yaml:"queue"`
	Drafts    bool   `yaml:"drafts"`
	Baselines *bool  `yaml:"baselines"`
	// ChangePoints configures reporting change points on the default
	// branch on their commit (changes.go); off by default.
	ChangePoints changePointConfig `yaml:"change_points"`
	// Config says how to measure the repository, in place of its
	// .perfbot.yml: a file path (relative to the server config's
	// directory) or the config itself, inline. Absent: the repository's
	// own .perfbot.yml at each base revision.
	Config yaml.Node `yaml:"config"`

	external *runner.ExternalConfig
}

const (
	defaultTokenEnv   = "GITHUB_TOKEN"
	defaultSecretEnv  = "PERFBOT_WEBHOOK_SECRET"
	defaultCheckName  = "perfbot"
	defaultJobTimeout = 2 * time.Hour
)

// loadBotConfig reads and checks the file at path; errors say what to fix.
func loadBotConfig(path string) (*botConfig, error) {
	if path == "" {
		return nil, errors.New("--config is required: a YAML file naming the repositories to serve and how to reach GitHub (see docs/server.md)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var c botConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if c.GitHub.TokenEnv == "" {
		c.GitHub.TokenEnv = defaultTokenEnv
	}
	if c.GitHub.WebhookSecretEnv == "" {
		c.GitHub.WebhookSecretEnv = defaultSecretEnv
	}
	if c.GitHub.CheckName == "" {
		c.GitHub.CheckName = defaultCheckName
	}
	app := c.GitHub.AppID != 0 || c.GitHub.InstallationID != 0 || c.GitHub.PrivateKeyFile != ""
	if app && (c.GitHub.AppID <= 0 || c.GitHub.InstallationID <= 0 || c.GitHub.PrivateKeyFile == "") {
		bad("github: a GitHub App needs app_id, installation_id and private_key_file together")
	}
	c.jobTimeout = defaultJobTimeout
	if c.JobTimeout != "" {
		d, err := time.ParseDuration(c.JobTimeout)
		if err != nil || d <= 0 {
			bad("job_timeout: %q is not a positive duration such as 90m or 2h", c.JobTimeout)
		}
		c.jobTimeout = d
	}
	seen := map[string]bool{}
	for i, r := range c.Repos {
		if _, err := github.ParseRepo(r.Name); err != nil {
			bad("repos[%d]: name %q: write it as owner/name", i, r.Name)
		}
		// GitHub's names are not case-sensitive, and neither is the
		// dispatcher's lookup: A/B and a/b are one repository.
		if seen[strings.ToLower(r.Name)] {
			bad("repos[%d]: %s is listed twice (names are not case-sensitive)", i, r.Name)
		}
		seen[strings.ToLower(r.Name)] = true
		if r.Queue == queue.ControlQueue {
			bad("repos[%d]: queue %q is perfbot serve's own; name the GPU hosts' queue (default %q)", i, r.Queue, queue.DefaultQueue)
		}
		if strings.HasPrefix(r.CloneURL, "-") {
			bad("repos[%d]: clone_url cannot begin with '-'", i)
		}
		for _, p := range c.Repos[i].ChangePoints.check() {
			bad("repos[%d]: change_points: %s", i, p)
		}
		ext, err := repoExternalConfig(path, r)
		if err != nil {
			bad("repos[%d]: config: %v", i, err)
		}
		c.Repos[i].external = ext
	}
	if len(c.Repos) == 0 {
		bad("repos: none listed; name each repository perfbot serves (name: owner/name)")
	}
	if c.Dashboard.Listen == "" {
		c.Dashboard.Listen = defaultDashboardListen
	}
	if c.Dashboard.Listen == dashboardSame && c.Dashboard.TokenEnv == "" {
		bad("dashboard: listen: same serves the job list and /metrics to whoever reaches the webhook's port: set dashboard.token_env, or give the dashboard an address of its own")
	}
	problems = append(problems, c.Database.check()...)
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: invalid perfbot server config:\n  %s", path, strings.Join(problems, "\n  "))
	}
	return &c, nil
}

// repoExternalConfig reads a repository's config: in the server config
// at path: a path to a file (relative to path's directory), or the
// config inline; nil when it has none.
func repoExternalConfig(path string, r repoConfig) (*runner.ExternalConfig, error) {
	switch r.Config.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		file := r.Config.Value
		if file == "" {
			return nil, errors.New("an empty path: name a file, or write the config inline")
		}
		shown := file
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(path), file)
		} else {
			shown = filepath.Base(file)
		}
		ext, err := runner.ReadConfigFile(file, fmt.Sprintf("config: of %s in %s", r.Name, path))
		if err != nil {
			return nil, err
		}
		// Reports are public (a pull request's comment): they name the
		// file as the server config does, never the server's layout.
		ext.Source = fmt.Sprintf("%s (the server config's config: of %s)", shown, r.Name)
		return ext, nil
	case yaml.MappingNode:
		data, err := yaml.Marshal(&r.Config)
		if err != nil {
			return nil, err
		}
		// Line numbers in errors count from the config's own first line.
		ext, err := runner.NewExternalConfig(data, fmt.Sprintf("inline config: of %s in %s (line %d)", r.Name, path, r.Config.Line))
		if err != nil {
			return nil, err
		}
		ext.Source = fmt.Sprintf("the server config's inline config: of %s (line %d)", r.Name, r.Config.Line)
		return ext, nil
	}
	return nil, fmt.Errorf("line %d: a file path or the config itself (a mapping), not a list", r.Config.Line)
}

// externalConfigs returns the configs of the repositories that have one,
// by lowercased name.
func (c *botConfig) externalConfigs() map[string]*runner.ExternalConfig {
	out := make(map[string]*runner.ExternalConfig)
	for _, r := range c.Repos {
		if r.external != nil {
			out[strings.ToLower(r.Name)] = r.external
		}
	}
	return out
}

// repos returns the served repositories, by name.
func (c *botConfig) repos() map[string]server.Repo {
	out := make(map[string]server.Repo, len(c.Repos))
	for _, r := range c.Repos {
		q := r.Queue
		if q == "" {
			q = queue.DefaultQueue
		}
		out[r.Name] = server.Repo{Name: r.Name, CloneURL: r.CloneURL, Queue: q, Drafts: r.Drafts,
			Baselines: r.Baselines == nil || *r.Baselines}
	}
	return out
}

// changePoints returns each served repository's change-point reporting
// config, by name.
func (c *botConfig) changePoints() map[string]changePointConfig {
	out := make(map[string]changePointConfig, len(c.Repos))
	for _, r := range c.Repos {
		out[r.Name] = r.ChangePoints
	}
	return out
}

// githubOptions returns the client options: App auth when configured,
// else the token from the environment.
func (c *botConfig) githubOptions() (github.Options, error) {
	o := github.Options{BaseURL: c.GitHub.APIURL, DryRun: c.GitHub.DryRun}
	if c.GitHub.AppID != 0 {
		o.App = &github.AppAuth{AppID: c.GitHub.AppID, InstallationID: c.GitHub.InstallationID, PrivateKeyFile: c.GitHub.PrivateKeyFile}
		return o, nil
	}
	o.Token = os.Getenv(c.GitHub.TokenEnv)
	if o.Token == "" {
		return o, fmt.Errorf("no GitHub credentials: set %s to a token, or configure a GitHub App (github.app_id, installation_id, private_key_file)", c.GitHub.TokenEnv)
	}
	return o, nil
}

// webhookSecret returns the webhook secret from the environment.
// dashboardToken returns the dashboard's token ("" when none is
// configured); a configured variable that is unset or empty is an error
// naming the setting, so that a typo never serves the dashboard open.
func (c *botConfig) dashboardToken() (string, error) {
	if c.Dashboard.TokenEnv == "" {
		return "", nil
	}
	t := os.Getenv(c.Dashboard.TokenEnv)
	if strings.TrimSpace(t) == "" {
		return "", fmt.Errorf("dashboard.token_env names %s, which is empty or unset: set it to the dashboard's token, or remove token_env to serve the dashboard without one", c.Dashboard.TokenEnv)
	}
	return t, nil
}

func (c *botConfig) webhookSecret() ([]byte, error) {
	s := os.Getenv(c.GitHub.WebhookSecretEnv)
	if s == "" {
		return nil, fmt.Errorf("no webhook secret: set %s to the secret configured on the GitHub webhook", c.GitHub.WebhookSecretEnv)
	}
	return []byte(s), nil
}
