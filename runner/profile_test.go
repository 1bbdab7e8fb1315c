package runner

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// profileBench is a benchmark program committed to test repositories: it
// appends its arguments to the file $ARGS_LOG, copies the commit's
// profile.bin to the file given after -cpuprofile (unless $IGNORE is
// set, as a program that knows no such flag) and prints a benchmark line
// named after $NAME.
const profileBench = `#!/bin/sh
set -e
echo "$#" "$@" >> "$ARGS_LOG"
if [ -z "$IGNORE" ] && [ "$1" = -cpuprofile ]; then
	cp profile.bin "$2"
fi
echo "Benchmark$NAME/phase=total 1 $((1000 + $$ % 7)) ns/op"
`

// gzipBytes returns text gzipped: binary data shaped like a pprof file.
func gzipBytes(t *testing.T, text string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	fmt.Fprint(zw, text)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// syncBuffer is a bytes.Buffer a logger may write to while a test reads
// it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestCompareStoresEachRunsCPUProfile(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	argsLog := func(name string) string { return filepath.Join(logs, name+".log") }
	config := fmt.Sprintf(`build:
  - ["true"]
benchmarks:
  - name: profiled
    command: [./bench.sh]
    cpuprofile: -cpuprofile
    env: {NAME: Profiled, ARGS_LOG: %q}
  - name: ignores
    command: [./bench.sh]
    cpuprofile: -cpuprofile
    env: {NAME: Ignores, ARGS_LOG: %q, IGNORE: "1"}
  - name: plain
    command: [./bench.sh]
    env: {NAME: Plain, ARGS_LOG: %q}
count: 2
warmup: 1
max_count: 2
timeout: 30s
`, argsLog("profiled"), argsLog("ignores"), argsLog("plain"))
	baseProfile, headProfile := gzipBytes(t, "base's profile\x00\xff"), gzipBytes(t, "head's profile, another\x00\x01")
	repo := workspacetest.New(t)
	base := repo.Commit(t, "base", map[string]string{".perfbot.yml": config, "bench.sh": profileBench, "profile.bin": string(baseProfile)})
	head := repo.Commit(t, "head", map[string]string{"profile.bin": string(headProfile)})

	r := newPRRunner(t)
	var logged syncBuffer
	r.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	res, err := r.Compare(context.Background(), CompareRequest{Source: repo.Dir, Base: base, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	if res.FailedRuns != 0 {
		t.Fatalf("%d runs failed, want none (ignoring the flag is no failure); logs:\n%s", res.FailedRuns, logged.String())
	}

	// What the comparison had: the profiled benchmark's runs carry their
	// side's profile, byte for byte; the other runs none.
	for _, side := range []struct {
		name string
		runs []analysis.Run
		want []byte
	}{{"base", res.BaseRuns, baseProfile}, {"head", res.HeadRuns, headProfile}} {
		profiled := 0
		for i, run := range side.runs {
			if run.Status != analysis.StatusOK {
				t.Errorf("%s run %d: status %s, want ok", side.name, i, run.Status)
			}
			if len(run.Profiles) == 0 {
				continue
			}
			profiled++
			p := run.Profiles[0]
			if len(run.Profiles) != 1 || p.Benchmark != "profiled" || p.Kind != analysis.ProfileCPU || !bytes.Equal(p.Data, side.want) {
				t.Errorf("%s run %d: profiles %+v, want one cpu profile of benchmark profiled with the %d bytes bench.sh copied",
					side.name, i, run.Profiles, len(side.want))
			}
			if !hasSample(run, "BenchmarkProfiled") {
				t.Errorf("%s run %d has a profile but is not the profiled benchmark's run", side.name, i)
			}
		}
		if len(side.runs) != 6 || profiled != 2 {
			t.Errorf("%s: %d runs, %d with a profile; want 6 runs (3 benchmarks, 2 each), 2 with one", side.name, len(side.runs), profiled)
		}
	}

	// What the store kept: the same profiles, with their runs.
	db := r.Store.(*store.DB)
	stored, err := db.Runs(context.Background(), store.RunQuery{Repo: repo.Dir, Kind: store.KindCompare, Profiles: true})
	if err != nil {
		t.Fatal(err)
	}
	profiled := 0
	for _, run := range stored {
		want := baseProfile
		if run.Commit.SHA == head {
			want = headProfile
		}
		if len(run.Profiles) == 0 {
			continue
		}
		profiled++
		if len(run.Profiles) != 1 || !bytes.Equal(run.Profiles[0].Data, want) || run.Profiles[0].Benchmark != "profiled" {
			t.Errorf("stored run %d of %s: profiles %+v, want the commit's profile.bin", run.ID, run.Commit.SHA[:7], run.Profiles)
		}
	}
	if len(stored) != 12 || profiled != 4 {
		t.Errorf("stored %d runs, %d with a profile; want 12, 4", len(stored), profiled)
	}

	// The flag and a path were appended for the benchmarks that ask, in
	// every run (warm-ups too), and for no other.
	for _, b := range []struct {
		name    string
		profile bool
	}{{"profiled", true}, {"ignores", true}, {"plain", false}} {
		data, err := os.ReadFile(argsLog(b.name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != 6 {
			t.Errorf("%s ran %d times, want 6 (2 sides × 1 warm-up and 2 runs)", b.name, len(lines))
		}
		for _, l := range lines {
			f := strings.Fields(l)
			switch {
			case b.profile && (len(f) != 3 || f[0] != "2" || f[1] != "-cpuprofile" || !filepath.IsAbs(f[2])):
				t.Errorf("%s got arguments %q, want -cpuprofile and an absolute path", b.name, l)
			case b.profile:
				if _, err := os.Stat(f[2]); !os.IsNotExist(err) {
					t.Errorf("%s: the profile %s is still there after the run (stat: %v)", b.name, f[2], err)
				}
			case !b.profile && l != "0":
				t.Errorf("%s got arguments %q, want none", b.name, l)
			}
		}
	}

	// The program that ignores the flag is warned about, once per
	// measured run; the others are not.
	var warnings []string
	for l := range strings.SplitSeq(logged.String(), "\n") {
		if strings.Contains(l, `msg="run warning"`) {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 4 {
		t.Errorf("%d run warnings, want 4 (benchmark ignores, 2 runs a side):\n%s", len(warnings), strings.Join(warnings, "\n"))
	}
	for _, w := range warnings {
		if !strings.Contains(w, "benchmark=ignores") || !strings.Contains(w, "no CPU profile") || !strings.Contains(w, "-cpuprofile FILE") {
			t.Errorf("warning %s; want one about benchmark ignores writing no CPU profile", w)
		}
	}
}

// hasSample reports whether run has a sample of the benchmark line name
// (without its "Benchmark" prefix in the sample, which parsing drops).
func hasSample(run analysis.Run, name string) bool {
	for _, s := range run.Samples {
		if s.Benchmark == strings.TrimPrefix(name, "Benchmark") {
			return true
		}
	}
	return false
}
