package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store/storetest"
)

// TestServeRefusesDashboardSettingsItCannotKeep: a dashboard token
// variable that is empty, an address already taken (the dashboard's or
// the webhook's) and "listen: same" without a token each stop serve
// before it serves anything, with exit 2 naming the setting.
func TestServeRefusesDashboardSettingsItCannotKeep(t *testing.T) {
	dsn := storetest.FreshPostgres(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	t.Setenv("PERFBOT_LISTEN_TEST_TOKEN", "ghp_x")
	t.Setenv("PERFBOT_LISTEN_TEST_SECRET", "s")
	t.Setenv("PERFBOT_LISTEN_TEST_EMPTY", "")
	t.Setenv("PERFBOT_LISTEN_TEST_DASH", "t0ken")
	cases := []struct{ name, yaml, want string }{
		{"empty token", "dashboard: {listen: 127.0.0.1:0, token_env: PERFBOT_LISTEN_TEST_EMPTY}",
			"dashboard.token_env names PERFBOT_LISTEN_TEST_EMPTY, which is empty or unset"},
		{"unset token", "dashboard: {listen: 127.0.0.1:0, token_env: PERFBOT_LISTEN_TEST_NO_SUCH}",
			"dashboard.token_env names PERFBOT_LISTEN_TEST_NO_SUCH"},
		{"dashboard address taken", fmt.Sprintf("dashboard: {listen: %q}", taken.Addr()),
			"dashboard.listen: cannot listen on " + taken.Addr().String()},
		{"dashboard address malformed", "dashboard: {listen: 'localhost:http-ish'}",
			"dashboard.listen: cannot listen on localhost:http-ish"},
		{"same without a token", "dashboard: {listen: same}",
			"dashboard: listen: same serves the job list and /metrics to whoever reaches the webhook's port"},
	}
	for _, tc := range cases {
		conf := filepath.Join(t.TempDir(), "server.yml")
		write(t, conf, fmt.Sprintf("listen: 127.0.0.1:0\ndb: %q\ngithub: {token_env: PERFBOT_LISTEN_TEST_TOKEN, webhook_secret_env: PERFBOT_LISTEN_TEST_SECRET}\nrepos: [{name: a/b}]\n%s\n", dsn, tc.yaml))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var out, errb bytes.Buffer
		err := run(ctx, []string{"serve", "--config", conf}, &out, &errb)
		cancel()
		if code := exitCode(err); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", tc.name, code, errb.String(), tc.want)
		}
	}
	// The webhook's own address, taken.
	conf := filepath.Join(t.TempDir(), "server.yml")
	write(t, conf, fmt.Sprintf("listen: %q\ndb: %q\ngithub: {token_env: PERFBOT_LISTEN_TEST_TOKEN, webhook_secret_env: PERFBOT_LISTEN_TEST_SECRET}\nrepos: [{name: a/b}]\ndashboard: {listen: off}\n", taken.Addr(), dsn))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	if code := exitCode(run(ctx, []string{"serve", "--config", conf}, &out, &errb)); code != exitUsage || !strings.Contains(errb.String(), "listen: cannot listen on "+taken.Addr().String()) {
		t.Errorf("webhook address taken: exit %d, stderr %q; want exit 2 naming listen", code, errb.String())
	}
}
