package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner"
)

func newInitCommand() *cobra.Command {
	var (
		dir   string
		print bool
	)
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter .perfbot.yml for the repository",
		Long: `init looks at the repository in --repo (default: here) and writes a
commented starter .perfbot.yml that measures it: Go packages with
benchmarks (go test -bench), a Rust crate (criterion if it depends on it,
else cargo bench's own lines), a CMake project with Google Benchmark, or,
failing those, an example of a program that prints its own phase timers
(format: lines). Edit it, then commit it to the default branch, or keep it
outside the repository and pass it with --config. It never overwrites a
file: --print writes to standard output instead.

Exit status (perfbot --help has the table): 0 written (or printed); 2 bad
input (--repo not a directory, a .perfbot.yml that exists, which init does
not overwrite); 4 could not write the file.`,
		Example: `  perfbot init
  perfbot init --repo ../prover --print > ci/perfbot.yml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return usagef(cmd, "--repo %s is not a directory", dir)
			}
			text, kind := starterConfig(dir)
			if _, err := runner.ParseConfig([]byte(text)); err != nil {
				return fmt.Errorf("the starter config for %s does not parse (a bug): %w", kind, err)
			}
			if print {
				_, err := fmt.Fprint(cmd.OutOrStdout(), text)
				return err
			}
			path := filepath.Join(dir, runner.ConfigFile)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return usagef(cmd, "%s exists: init does not overwrite it (--print writes the starter to standard output)", path)
			}
			if err != nil {
				return err
			}
			if _, err := f.WriteString(text); err != nil {
				f.Close()
				os.Remove(path)
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			hint := "perfbot compare --base " + defaultBranch(dir) + " --head HEAD"
			if dir != "." {
				hint = "perfbot compare --repo " + render.FormatArgs([]string{dir}) + " --base " + defaultBranch(dir) + " --head HEAD"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s for %s; edit it, then %s\n", path, kind, hint)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "repo", ".", "the repository's directory")
	cmd.Flags().BoolVar(&print, "print", false, "write the starter to standard output, not to .perfbot.yml")
	return cmd
}

// starterConfig returns a commented .perfbot.yml for the repository in
// dir, and what kind of project it took it for.
func starterConfig(dir string) (text, kind string) {
	switch {
	case exists(dir, "go.mod"):
		if pkgs := goBenchPackages(dir); len(pkgs) > 0 {
			return goStarter(pkgs), "a Go module with benchmarks in " + strings.Join(pkgs, ", ")
		}
	case exists(dir, "Cargo.toml"):
		if fileContains(dir, "Cargo.toml", "criterion") {
			return rustStarter("criterion", rustBenchTargets(dir)), "a Rust crate with criterion benchmarks"
		}
		return rustStarter("libtest", rustBenchTargets(dir)), "a Rust crate (cargo bench's own benchmarks)"
	case exists(dir, "CMakeLists.txt") && fileContains(dir, "CMakeLists.txt", "benchmark"):
		return cmakeStarter(cmakeBenchTarget(dir)), "a CMake project with Google Benchmark"
	}
	return linesStarter, "a program that prints its own phase timers (an example to edit)"
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

func fileContains(dir, name, word string) bool {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return err == nil && strings.Contains(string(b), word)
}

// goBenchPackages returns the packages under dir (as ./path) whose tests
// hold a Benchmark function, at most three, skipping vendor, testdata and
// hidden directories.
func goBenchPackages(dir string) []string {
	bench := regexp.MustCompile(`(?m)^func Benchmark[A-Z_0-9]`)
	var pkgs []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || len(pkgs) >= 3 {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() && path != dir && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil || !bench.Match(b) {
			return nil
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		pkg := "./" + filepath.ToSlash(rel)
		if rel == "." {
			pkg = "."
		}
		if !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
		return nil
	})
	return pkgs
}

// cmakeBenchTarget guesses the benchmark executable from
// add_executable(NAME …) lines that mention bench, or returns a
// placeholder.
func cmakeBenchTarget(dir string) string {
	f, err := os.Open(filepath.Join(dir, "CMakeLists.txt"))
	if err != nil {
		return "my_benchmark"
	}
	defer f.Close()
	re := regexp.MustCompile(`add_executable\(\s*([A-Za-z0-9_.-]*bench[A-Za-z0-9_.-]*)`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	return "my_benchmark"
}

const starterHead = `# perfbot's measurement config (perfbot init wrote this starter: edit it).
# perfbot reads it from the base revision of every comparison (or from
# --config FILE); runner/testdata/perfbot.example.yml in perfbot's
# repository documents every field. ${PERFBOT_OUT} is a fresh directory for
# build outputs; commands run in the revision's worktree.
`

const starterTail = `# Runs a side, warm-ups thrown away first; unsettled comparisons add runs
# up to max_count, at looks that together keep the false-alarm rate at alpha.
count: 10
warmup: 1
max_count: 60
thresholds:
  alpha: 0.01
  min_change_pct: 1.0
`

func goStarter(pkgs []string) string {
	var b strings.Builder
	b.WriteString(starterHead)
	b.WriteString("# Each package's test binary, built once per revision; its benchmarks print\n# Go benchmark format, which perfbot reads as it is (sub-benchmarks named\n# phase=NAME are phases of one benchmark).\nbuild:\n")
	for _, p := range pkgs {
		fmt.Fprintf(&b, "  - [go, test, -c, -o, \"${PERFBOT_OUT}/%s.test\", %s]\n", goBinName(p), p)
	}
	b.WriteString("benchmarks:\n")
	for _, p := range pkgs {
		n := goBinName(p)
		fmt.Fprintf(&b, "  - name: %s\n    command: [\"${PERFBOT_OUT}/%s.test\", -test.run, \"^$\", -test.bench, ., -test.benchmem]\n    cpuprofile: -test.cpuprofile   # where a regressed benchmark's time went\n", n, n)
	}
	b.WriteString(starterTail)
	return b.String()
}

// goBinName names a package's test binary and benchmark: its last path
// element, in the characters a benchmark name allows.
func goBinName(pkg string) string {
	base := filepath.Base(pkg)
	if pkg == "." {
		base = "root"
	}
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, base)
	return orDefault(name, "bench")
}

// orDefault returns s, or def when s has nothing but dashes.
func orDefault(s, def string) string {
	if strings.Trim(s, "-") == "" {
		return def
	}
	return s
}

// rustBenchTargets returns the crate's bench targets, at most three: the
// names of Cargo.toml's [[bench]] sections, then benches/NAME.rs and
// benches/NAME/main.rs, which cargo finds by itself.
func rustBenchTargets(dir string) []string {
	var names []string
	ok := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	add := func(n string) {
		if ok.MatchString(n) && len(names) < 3 && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "Cargo.toml")); err == nil {
		name := regexp.MustCompile(`^name\s*=\s*"([^"]+)"`)
		inBench := false
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "[") {
				inBench = line == "[[bench]]"
			} else if m := name.FindStringSubmatch(line); inBench && m != nil {
				add(m[1])
			}
		}
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "benches")); err == nil {
		for _, e := range entries {
			if n, rs := strings.CutSuffix(e.Name(), ".rs"); rs && !e.IsDir() {
				add(n)
			} else if e.IsDir() && exists(filepath.Join(dir, "benches", e.Name()), "main.rs") {
				add(e.Name())
			}
		}
	}
	return names
}

// rustStarter is docs/guarding.md's setup for a crate's bench targets:
// cargo builds in one target directory shared by every revision, and each
// bench binary is copied into ${PERFBOT_OUT} and run directly.
func rustStarter(format string, targets []string) string {
	var b strings.Builder
	b.WriteString(starterHead)
	b.WriteString(`# cargo builds in one target directory shared by every revision, so the
# dependencies compile once. cargo goes by modification times: touching the
# sources makes it rebuild this revision's crate. The next revision's build
# overwrites the bench binary, so it is copied into ${PERFBOT_OUT}.
`)
	if len(targets) == 0 {
		b.WriteString("# No bench target found (benches/NAME.rs or [[bench]]): name yours.\n")
		targets = []string{"my_bench"}
	}
	cargo := "cargo"
	if format == "libtest" {
		b.WriteString("# #[bench] needs nightly; RUSTC_BOOTSTRAP=1 lets a stable rustc build it.\n")
		cargo = "RUSTC_BOOTSTRAP=1 cargo"
	}
	b.WriteString(`build:
  - - sh
    - -c
    - |
      set -e
      export CARGO_TARGET_DIR="$HOME/.cache/perfbot/cargo-target"
      find . -path ./target -prune -o -name '*.rs' -exec touch {} +
`)
	for _, t := range targets {
		fmt.Fprintf(&b, "      exe=$(%s bench --no-run --bench %s --message-format=json-render-diagnostics | sed -n 's/.*\"executable\":\"\\([^\"]*\\)\".*/\\1/p')\n", cargo, t)
		fmt.Fprintf(&b, "      cp \"$exe\" \"${PERFBOT_OUT}/%s\"\n", t)
	}
	b.WriteString("# The builds share that directory: one at a time.\nbuild_parallel: 1\nbenchmarks:\n")
	for i, t := range targets {
		if format == "criterion" {
			fmt.Fprintf(&b, "  - name: %s\n    command: [\"${PERFBOT_OUT}/%s\", --bench, --noplot]\n", goBinName(t), t)
			if i == 0 {
				b.WriteString("    # criterion's own files under target/criterion (new/sample.json):\n    # every sample is a value; groups and parameters are name parts.\n")
			}
			b.WriteString("    format: criterion\n    path: target/criterion\n")
		} else {
			fmt.Fprintf(&b, "  - name: %s\n    command: [\"${PERFBOT_OUT}/%s\", --bench]\n", goBinName(t), t)
			if i == 0 {
				b.WriteString("    # libtest's lines (test NAME ... bench: N ns/iter), one a benchmark.\n")
			}
			b.WriteString("    format: libtest\n")
		}
		b.WriteString("    timeout: 30m\n")
	}
	if format == "libtest" {
		// libtest runs each benchmark until its samples settle, which
		// warms it up: docs/guarding.md's setup has no warm-up run.
		b.WriteString(strings.Replace(starterTail, "warmup: 1\n", "warmup: 0   # libtest warms each benchmark up itself\n", 1))
		return b.String()
	}
	b.WriteString(starterTail)
	return b.String()
}

func cmakeStarter(target string) string {
	return starterHead + fmt.Sprintf(`build:
  - [cmake, -S, ., -B, "${PERFBOT_OUT}/build", -DCMAKE_BUILD_TYPE=Release]
  - [cmake, --build, "${PERFBOT_OUT}/build", --parallel]
benchmarks:
  - name: bench
    # The Google Benchmark executable (%s: check the target's name).
    command: ["${PERFBOT_OUT}/build/%s", --benchmark_format=json, --benchmark_repetitions=3]
    # Repetitions are values; aggregates (_mean, _median …) are not
    # counted twice; user counters become units of their own.
    format: gbench
`, target, target) + starterTail
}

const linesStarter = starterHead + `# No Go, Rust or CMake benchmark found: this is an example for a program
# that prints its own phase timers, as "TIMING synthesis_ms=54712". Replace
# the build and the command with yours, and the pattern with what it prints:
# a regular expression with the groups value (required), phase, unit and
# benchmark (optional). ns, us, ms and s are read as times (sec/op).
build:
  - [make]
benchmarks:
  - name: prover
    command: [./prover, --bench]
    format: lines
    stream: stderr
    pattern: 'TIMING (?P<phase>\w+)_(?P<unit>ms)=(?P<value>[0-9.]+)'
` + starterTail

// defaultBranch names the branch a repository's pull requests merge
// into, for the command init suggests: origin's HEAD where the clone
// knows it, else the branch checked out, else "main".
func defaultBranch(dir string) string {
	if out, err := exec.Command("git", "-C", dir, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD").Output(); err == nil {
		if b := strings.TrimPrefix(strings.TrimSpace(string(out)), "origin/"); b != "" {
			return b
		}
	}
	if out, err := exec.Command("git", "-C", dir, "symbolic-ref", "--quiet", "--short", "HEAD").Output(); err == nil {
		if b := strings.TrimSpace(string(out)); b != "" {
			return b
		}
	}
	return "main"
}
