package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// freeAddr returns a loopback address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDashboardCommandServesASQLiteStoreReadOnly: perfbot dashboard
// serves a SQLite store's pages with no server config, no GitHub and no
// migration: the index lists the stored series, the jobs page says there
// is no queue, a token is asked for when configured, and the file is
// left as it was.
func TestDashboardCommandServesASQLiteStoreReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perfbot.db")
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	for i, v := range []float64{1.00, 1.02, 0.99} {
		start := t0.Add(time.Duration(i) * time.Hour)
		if _, err := db.SaveRun(context.Background(), &store.RunRecord{
			Repo: "/src/prover", Commit: store.Commit{SHA: fmt.Sprintf("%040x", i+1), AuthorTime: start}, Kind: store.KindBaseline,
			ConfigHash: "cfg", Machine: "m1", StartedAt: start, EndedAt: start.Add(time.Second), Status: analysis.StatusOK,
			Samples: []analysis.Sample{{Key: analysis.Key{Benchmark: "Prove/circuit=sha256", Phase: "msm_h", Unit: "sec/op"}, Value: v}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	t.Setenv("PERFBOT_DASH_TEST_TOKEN", "s3cr3t-dash")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- exitCode(run(ctx, []string{"dashboard", "--db", path, "--listen", addr, "--token-env", "PERFBOT_DASH_TEST_TOKEN"}, &bytes.Buffer{}, &errb))
	}()
	get := func(p string, token bool) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+p, nil)
		if token {
			req.SetBasicAuth("maintainer", "s3cr3t-dash")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := get("/healthz", false); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("perfbot dashboard did not answer /healthz in 20 s; stderr:\n%s", errb.String())
		}
	}
	if code, body := get("/", false); code != http.StatusUnauthorized || strings.Contains(body, "Prove") {
		t.Errorf("GET / without the token: %d; want 401 and nothing served", code)
	}
	if code, body := get("/", true); code != http.StatusOK || !strings.Contains(body, "Prove/circuit=sha256") || !strings.Contains(body, "msm_h") {
		t.Errorf("GET / with the token: %d, want the stored series listed:\n%.2000s", code, body)
	}
	if code, body := get("/jobs", true); code != http.StatusOK || !strings.Contains(strings.ToLower(body), "no job queue") && !strings.Contains(strings.ToLower(body), "no queue") {
		t.Errorf("GET /jobs on SQLite: %d; want a page saying there is no queue:\n%.1500s", code, body)
	}
	if code, _ := get("/webhook", true); code != http.StatusNotFound {
		t.Errorf("POST-less /webhook on the dashboard: %d; want 404 (no webhook here)", code)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("perfbot dashboard exited %d after its context ended; stderr:\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "read-only, token required") {
		t.Errorf("stderr %q; want the address and read-only said", errb.String())
	}
}

// TestDashboardCommandRefusesWhatItCannotServe: no database at the path
// (it creates none), an empty token variable and a taken address exit 2
// naming what to fix.
func TestDashboardCommandRefusesWhatItCannotServe(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.db")
	path := filepath.Join(t.TempDir(), "perfbot.db")
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	t.Setenv("PERFBOT_DASH_TEST_EMPTY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dashboard", "--db", missing, "--listen", "127.0.0.1:0"}, "no database at " + missing},
		{[]string{"dashboard", "--db", path, "--token-env", "PERFBOT_DASH_TEST_EMPTY"}, "--token-env names PERFBOT_DASH_TEST_EMPTY, which is empty or unset"},
		{[]string{"dashboard", "--db", path, "--listen", taken.Addr().String()}, "--listen: cannot listen on " + taken.Addr().String()},
	} {
		_, errOut, code := perfbot(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 saying %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, err := filepath.Glob(missing + "*"); err == nil {
		if m, _ := filepath.Glob(missing + "*"); len(m) != 0 {
			t.Errorf("the dashboard made %v", m)
		}
	}
}
