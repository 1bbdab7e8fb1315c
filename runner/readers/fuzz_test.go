package readers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/analysis"
)

// checkRead fails t unless a Read gave either an error or samples that
// keep the package's promises (checkSamples): never both, never neither.
func checkRead(t *testing.T, s []analysis.Sample, err error) {
	t.Helper()
	if err != nil {
		if s != nil {
			t.Fatalf("error %v with %d samples", err, len(s))
		}
		return
	}
	if len(s) == 0 {
		t.Fatal("no samples and no error")
	}
	checkSamples(t, s)
}

// addFiles adds each file under dir matching pattern to f's corpus.
func addFiles(f *testing.F, pattern string) {
	f.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files %s: %v", pattern, err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzGbench(f *testing.F) {
	addFiles(f, "testdata/gbench/*.json")
	f.Add([]byte(`{"benchmarks":[{"name":"BM/1/phase:2/ x /-8","real_time":1e308,"cpu_time":-1,"time_unit":"s","n":1e308,"":1}]}`))
	f.Add([]byte("log\n{\"benchmarks\":[{\"run_name\":\"\",\"name\":\"\\t\",\"real_time\":1}]}"))
	f.Add([]byte(`{"benchmarks":[{"name":"x","skipped":1,"real_time":1},{"name":"y","real_time":null}]}`))
	r := mustNew(f, Config{Format: "gbench"})
	f.Fuzz(func(t *testing.T, stdout []byte) {
		s, err := r.Read(Output{Stdout: stdout})
		checkRead(t, s, err)
	})
}

func FuzzCriterion(f *testing.F) {
	for _, d := range []string{"mix 500", "mix/2000", "mix/steps/1000"} {
		b, err := os.ReadFile(filepath.Join("testdata/criterion/results", d, "new/benchmark.json"))
		if err != nil {
			f.Fatal(err)
		}
		s, err := os.ReadFile(filepath.Join("testdata/criterion/results", d, "new/sample.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, s)
	}
	f.Add([]byte(`{"group_id":"a/phase=1/ /-3","function_id":"","value_str":"=/="}`), []byte(`{"iters":[-1,0,1e-300],"times":[1,1,1e300]}`))
	f.Fuzz(func(t *testing.T, bench, sample []byte) {
		s, err := parseCriterion(bench, sample)
		checkRead(t, s, err)
	})
}

func FuzzLibtest(f *testing.F) {
	addFiles(f, "testdata/libtest/*.txt")
	f.Add([]byte("test a::1::phase=x ... bench: 1,234 ns/iter (+/- 5) = 9 MB/s\n"))
	f.Add([]byte("test x ... bench: 9" + "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999 ns/iter (+/- 1)\n"))
	r := mustNew(f, Config{Format: "libtest"})
	f.Fuzz(func(t *testing.T, stdout []byte) {
		s, err := r.Read(Output{Stdout: stdout})
		checkRead(t, s, err)
	})
}

func FuzzHyperfine(f *testing.F) {
	addFiles(f, "testdata/hyperfine/*.json")
	f.Add([]byte(`{"results":[{"command":"a","times":[1,2],"exit_codes":[null,0]},{"command":"a","times":[1],"parameters":{"phase":"x","":"/"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseHyperfine(data)
		checkRead(t, s, err)
	})
}

func FuzzLines(f *testing.F) {
	addFiles(f, "testdata/lines/*.txt")
	f.Add([]byte("a/phase=b/-9 c/-4 1e308 ms_s\n  \t 5 µs\n"))
	f.Add([]byte("x 1 ns\nx 2\n"))
	patterns := []Reader{
		mustNew(f, Config{Format: "lines", Pattern: cuzkPattern}),
		mustNew(f, Config{Format: "lines", Pattern: `(?P<benchmark>\S*) (?P<phase>\S*) (?P<value>\S+) (?P<unit>\S*)`, Unit: "s"}),
		mustNew(f, Config{Format: "lines", Pattern: `(?P<benchmark>\S+)? (?P<value>[0-9.e+-]+) ?(?P<unit>\S*)`, Unit: "B", Stream: "stderr"}),
		mustNew(f, Config{Format: "lines", Pattern: `(?P<value>)`, Unit: "x"}),
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, r := range patterns {
			s, err := r.Read(Output{Stdout: text, Stderr: text})
			checkRead(t, s, err)
		}
	})
}
