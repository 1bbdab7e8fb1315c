package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// The Rust tests compare a small crate end to end: cargo builds its
// benchmarks, perfbot runs each revision's own binary and reads what it
// wrote (criterion's files, or libtest's lines). Neither is parallel: cargo
// builds on every core, and both time the wall clock, which the tests
// beside them would stretch.

// rustLib is the crate's library: two checksums of n dependent steps each
// (a chain the compiler cannot shorten), the work the benchmarks time.
const rustLib = `//! Two checksums of n dependent steps each, the work the benchmarks time.

/// mix runs n xorshift steps from x.
pub fn mix(mut x: u64, n: u64) -> u64 {
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// fold runs n multiply-xor steps from x.
pub fn fold(mut x: u64, n: u64) -> u64 {
    for i in 0..n {
        x = (x ^ (x >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i;
    }
    x
}
`

// slowFold is rustLib with fold doing twice the steps: the planted
// slowdown of the head commits.
func slowFold(t *testing.T) string {
	t.Helper()
	slow := strings.Replace(rustLib, "for i in 0..n {", "for i in 0..2 * n {", 1)
	if slow == rustLib {
		t.Fatal("rustLib's fold no longer loops over 0..n: update slowFold")
	}
	return slow
}

// rustGitignore keeps cargo's outputs and criterion's files out of git
// status, so that perfbot's worktrees stay intact between compares.
const rustGitignore = "/target\n/Cargo.lock\n"

// criterionCargoToml declares one criterion benchmark target.
const criterionCargoToml = `[package]
name = "mixer"
version = "0.1.0"
edition = "2018"
publish = false

[dev-dependencies]
criterion = { version = "0.3", default-features = false }

[[bench]]
name = "checksums"
harness = false
`

// criterionBenches times both checksums of 1000 steps in a group, by
// function and parameter, and mix of 4000 steps on its own. criterion
// 0.3's --warm-up-time and --measurement-time take whole seconds: the
// group's config keeps each benchmark under half a second.
const criterionBenches = `use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use mixer::{fold, mix};
use std::time::Duration;

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("checksum");
    g.bench_with_input(BenchmarkId::new("mix", 1000), &1000u64, |b, &n| b.iter(|| mix(black_box(1), black_box(n))));
    g.bench_with_input(BenchmarkId::new("fold", 1000), &1000u64, |b, &n| b.iter(|| fold(black_box(1), black_box(n))));
    g.finish();
    c.bench_function("mix 4000", |b| b.iter(|| mix(black_box(1), black_box(4000))));
}

criterion_group! {
    name = checksums;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(50))
        .measurement_time(Duration::from_millis(200));
    targets = benches
}
criterion_main!(checksums);
`

// debianCargoConfig points cargo at Debian's packaged crates
// (librust-criterion-dev), offline: the crate builds without a network.
const debianCargoConfig = `[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "/usr/share/cargo/registry"

[net]
offline = true
`

// rustStarterFor is perfbot init's starter for the crate in dir, as a
// user would commit it, with the test's cargo target directory in place of
// $HOME/.cache/perfbot/cargo-target (quoted in ”), a 1-minute timeout a
// run, and the test's counts and thresholds (tail) in place of the
// starter's.
func rustStarterFor(t *testing.T, dir, target, tail string) string {
	t.Helper()
	text, _ := starterConfig(dir)
	const shared = `"$HOME/.cache/perfbot/cargo-target"`
	i := strings.Index(text, "# Runs a side")
	if !strings.Contains(text, shared) || !strings.Contains(text, "    timeout: 30m\n") || i < 0 {
		t.Fatalf("perfbot init's Rust starter changed: update rustStarterFor\n%s", text)
	}
	text = strings.Replace(text[:i], shared, "'"+target+"'", 1)
	return strings.ReplaceAll(text, "    timeout: 30m\n", "    timeout: 1m\n") + tail
}

// criterionTail: eight runs a side, and up to forty while unsettled:
// criterion times the wall clock, which make test's other packages
// stretch (six fixed runs found the doubled fold at p=0.123 once under
// that load; at a cap of twenty, beside three more builds on the two
// cores, +89.9% stopped unsettled at p=0.047). A settled result stops at
// its look, so the cap costs only a loaded machine.
const criterionTail = `count: 8
warmup: 1
max_count: 40
thresholds:
  alpha: 0.01
  min_change_pct: 10
`

// rustRequireTools is the environment variable that turns a missing tool
// from a skip into a failure (CI sets it), as in runner/readers' tests.
const rustRequireTools = "PERFBOT_REQUIRE_READER_TOOLS"

// missingRustTool skips t because a tool it needs is missing, or fails it
// when PERFBOT_REQUIRE_READER_TOOLS=1.
func missingRustTool(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(rustRequireTools) == "1" {
		t.Fatalf("%s=1: %s", rustRequireTools, msg)
	}
	t.Skip(msg)
}

// needRustTools finds cargo (in PATH or rustup's ~/.cargo/bin, which it
// then puts in PATH for perfbot's builds) and cc, rustc's linker, or skips
// t (see missingRustTool).
func needRustTools(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("cargo"); err != nil {
		home, _ := os.UserHomeDir()
		bin := filepath.Join(home, ".cargo", "bin")
		if fi, err := os.Stat(filepath.Join(bin, "cargo")); err != nil || fi.IsDir() {
			missingRustTool(t, "no cargo in PATH or %s: install Rust (apt-get install cargo, or rustup)", bin)
		}
		t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	if _, err := exec.LookPath("cc"); err != nil {
		missingRustTool(t, "no cc in PATH, rustc's linker: apt-get install gcc")
	}
}

// rustRows returns the report's sec/op rows of the program's benchmarks
// (not perfbot's process counters), by benchmark.
func rustRows(t *testing.T, rep *analysis.Report) map[string]analysis.Row {
	t.Helper()
	rows := map[string]analysis.Row{}
	for _, row := range rep.Phases {
		if row.Unit == "sec/op" && !strings.HasPrefix(row.Benchmark, "process") {
			rows[row.Benchmark] = row
		}
	}
	return rows
}

// checkPlanted checks that the planted benchmark is a regression of about
// twice the time and no other benchmark changed.
func checkPlanted(t *testing.T, rows map[string]analysis.Row, planted string, others ...string) {
	t.Helper()
	if len(rows) != len(others)+1 {
		t.Errorf("sec/op rows %v, want %s and %v", keysOf(rows), planted, others)
	}
	// Twice the steps: about +100%, less where the loop's overhead is
	// a part of the time, more or less with a busy machine.
	if p := rows[planted]; p.Verdict != analysis.VerdictRegression || p.Change() < 50 || p.Change() > 200 {
		t.Errorf("%s %s %+.1f%% (p=%.3g), want the doubled work as a regression of about +100%%", planted, p.Verdict, p.Change(), p.PValue)
	}
	// 1000 steps take microseconds: read as seconds, not nanoseconds.
	if b := rows[planted].BaseValue; !(b > 1e-7 && b < 1e-4) {
		t.Errorf("%s's base %g s, want a few µs: the unit was not converted", planted, b)
	}
	for _, name := range others {
		if row, ok := rows[name]; !ok {
			t.Errorf("no row for %s", name)
		} else if row.Verdict == analysis.VerdictRegression || row.Verdict == analysis.VerdictImprovement {
			t.Errorf("%s %s %+.1f%% (p=%.3g), want no change", name, row.Verdict, row.Change(), row.PValue)
		}
	}
}

func keysOf(m map[string]analysis.Row) []string {
	var k []string
	for name := range m {
		k = append(k, name)
	}
	return k
}

// checkAA compares head against itself: nothing may change.
func checkAA(t *testing.T, dir, head, db, data, cfg string) {
	t.Helper()
	aa, _, _ := compareJSON(t, "--repo", dir, "--base", head, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	if aa.Verdict == analysis.VerdictRegression || aa.Verdict == analysis.VerdictImprovement {
		for name, row := range rustRows(t, aa) {
			t.Logf("A/A %s: %s %+.1f%% (p=%.3g)", name, row.Verdict, row.Change(), row.PValue)
		}
		t.Errorf("A/A: %s", aa.Verdict)
	}
}

// A Rust crate's criterion benchmarks, built offline with cargo against
// Debian's packaged criterion and compared through --config with perfbot
// init's starter for it (format criterion): the checksum made to take twice the steps is the regression,
// the others are not, the same revision against itself finds nothing, and
// benchstat on perfbot export finds the same change.
func TestCompareReadsCriterion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Rust crate and runs its criterion benchmarks 28 times: skipped in -short mode")
	}
	needRustTools(t)
	if m, _ := filepath.Glob("/usr/share/cargo/registry/criterion-0.3.*"); len(m) == 0 {
		missingRustTool(t, "no criterion 0.3 crate in /usr/share/cargo/registry: apt-get install librust-criterion-dev")
	}
	// The runner/readers criterion test's target directory: criterion
	// and its dependencies compile once for both (about 2 minutes on 2
	// cores), not on every run of either test.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = t.TempDir()
	}
	target := filepath.Join(cache, "perfbot", "readers-criterion-target")
	if strings.Contains(target, "'") {
		target = filepath.Join(t.TempDir(), "target") // the build quotes it in ''
	}
	r := workspacetest.New(t)
	base := r.Commit(t, "checksums: criterion benchmarks", map[string]string{
		"Cargo.toml":           criterionCargoToml,
		".cargo/config.toml":   debianCargoConfig,
		".gitignore":           rustGitignore,
		"src/lib.rs":           rustLib,
		"benches/checksums.rs": criterionBenches,
	})
	head := r.Commit(t, "fold: twice the steps", map[string]string{"src/lib.rs": slowFold(t)})
	data := t.TempDir()
	db := filepath.Join(data, "perfbot.db")
	cfg := filepath.Join(t.TempDir(), "criterion.yml")
	if err := os.WriteFile(cfg, []byte(rustStarterFor(t, r.Dir, target, criterionTail)), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, _ := compareJSON(t, "--repo", r.Dir, "--base", base, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	rows := rustRows(t, rep)
	const planted = "checksum/function=fold/param=1000"
	checkPlanted(t, rows, planted, "checksum/function=mix/param=1000", "mix_4000")
	// export names the benchmark Benchmarkchecksum/function=fold/param=1000:
	// benchstat's .fullname is the name after "Benchmark". Each run holds
	// criterion's 10 samples of it, of which compare tests the median:
	// export --per-run prints that. Only the compare's runs are stored
	// yet: all of base's are kept.
	checkBenchstat(t, r.Dir, db, data, base, head, benchstatRow{
		filter: ".unit:sec/op", row: ".fullname", label: planted, perRun: true, want: rows[planted]})
	checkAA(t, r.Dir, head, db, data, cfg)
	checkOwnBinaries(t, data, "checksums")
}

// checkOwnBinaries checks that each revision's build output directory
// holds a binary of its own, not the one cargo built last.
func checkOwnBinaries(t *testing.T, data, name string) {
	t.Helper()
	bins, err := filepath.Glob(filepath.Join(data, "builds", "*", name))
	if err != nil || len(bins) != 2 {
		t.Fatalf("built binaries %v (%v), want base's and head's", bins, err)
	}
	a, errA := os.ReadFile(bins[0])
	b, errB := os.ReadFile(bins[1])
	if errA != nil || errB != nil || string(a) == string(b) {
		t.Errorf("base and head ran the same binary (%v, %v)", errA, errB)
	}
}

// libtestCargoToml declares one benchmark target with libtest's harness.
const libtestCargoToml = `[package]
name = "mixer"
version = "0.1.0"
edition = "2018"
publish = false

[[bench]]
name = "checksums"
`

// libtestBenches times both checksums of 1000 steps with #[bench], which
// needs the unstable test crate: nightly, or RUSTC_BOOTSTRAP=1.
const libtestBenches = `#![feature(test)]
extern crate test;

use mixer::{fold, mix};
use test::{black_box, Bencher};

#[bench]
fn mix_1000(b: &mut Bencher) {
    b.iter(|| mix(black_box(1), black_box(1000)));
}

#[bench]
fn fold_1000(b: &mut Bencher) {
    b.iter(|| fold(black_box(1), black_box(1000)));
}
`

// libtestTail: libtest runs each benchmark until its samples settle, or
// for about 3 to 5 seconds where a busy machine keeps them from settling:
// no warm-up run, since libtest's first samples warm the benchmark up
// anyway. Six runs a side find the doubled fold on a quiet machine; while
// CUDA builds shared the two cores, fold's runs spread ±50% and six left
// it inconclusive (p = 0.36), so compare adds runs up to 16 while a series
// is unsettled, as it does for any user.
const libtestTail = `count: 6
warmup: 0
max_count: 16
thresholds:
  alpha: 0.01
  min_change_pct: 10
`

// A Rust crate's #[bench] functions, built and compared through --config
// with perfbot init's starter for the crate (format libtest): the checksum made to take
// twice the steps is the regression, the other is not, the same revision
// against itself finds nothing, and benchstat on perfbot export finds the
// same change.
func TestCompareReadsLibtest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Rust crate and runs its benchmarks at least 24 times: skipped in -short mode")
	}
	needRustTools(t)
	r := workspacetest.New(t)
	base := r.Commit(t, "checksums: #[bench] functions", map[string]string{
		"Cargo.toml":           libtestCargoToml,
		".gitignore":           rustGitignore,
		"src/lib.rs":           rustLib,
		"benches/checksums.rs": libtestBenches,
	})
	head := r.Commit(t, "fold: twice the steps", map[string]string{"src/lib.rs": slowFold(t)})
	data := t.TempDir()
	db := filepath.Join(data, "perfbot.db")
	cfg := filepath.Join(t.TempDir(), "libtest.yml")
	if err := os.WriteFile(cfg, []byte(rustStarterFor(t, r.Dir, filepath.Join(t.TempDir(), "target"), libtestTail)), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, _ := compareJSON(t, "--repo", r.Dir, "--base", base, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	rows := rustRows(t, rep)
	checkPlanted(t, rows, "fold_1000", "mix_1000")
	checkBenchstat(t, r.Dir, db, data, base, head, benchstatRow{
		filter: ".unit:sec/op", row: ".fullname", label: "fold_1000", want: rows["fold_1000"]})
	checkAA(t, r.Dir, head, db, data, cfg)
	checkOwnBinaries(t, data, "checksums")
}
