package execute

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
)

// profileFile writes data to a file for the profile helper to copy and
// returns the variable that names it.
func profileFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profile.src")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return profileEnv + "=" + path
}

// gzipped returns every byte value, gzipped: binary data shaped like a
// pprof file, NUL bytes and all.
func gzipped(t *testing.T) []byte {
	t.Helper()
	var raw, buf bytes.Buffer
	for i := range 4096 {
		raw.WriteByte(byte(i * 7))
	}
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// givenArgs returns the arguments the profile helper reported.
func givenArgs(t *testing.T, res Result) []string {
	t.Helper()
	line, ok := res.Config["args"]
	if !ok || !strings.HasPrefix(line, "[") || !strings.HasSuffix(line, "]") {
		t.Fatalf("the helper reported no arguments: config %v", res.Config)
	}
	return strings.Fields(line[1 : len(line)-1])
}

func TestRunReadsTheCPUProfileTheBenchmarkWrote(t *testing.T) {
	t.Parallel()
	data := gzipped(t)
	res := runHelper(t, "profile", Spec{Name: "prove", CPUProfileFlag: "-cpuprofile", Env: []string{profileFile(t, data)}})
	wantStatus(t, res, analysis.StatusOK)
	want := []analysis.Profile{{Benchmark: "prove", Kind: analysis.ProfileCPU, Data: data}}
	if !reflect.DeepEqual(res.Run.Profiles, want) {
		t.Errorf("Profiles = %d profiles %+v, want the %d bytes the benchmark wrote", len(res.Run.Profiles), res.Run.Profiles, len(data))
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q, want none", res.Warnings)
	}
	// The two arguments come last: the flag, then a path of its own in a
	// new temporary directory, which is gone afterwards.
	args := givenArgs(t, res)
	if len(args) != 2 || args[0] != "-cpuprofile" || !filepath.IsAbs(args[1]) ||
		!strings.HasPrefix(filepath.Base(filepath.Dir(args[1])), "perfbot-profile-") {
		t.Fatalf("the benchmark got arguments %q, want -cpuprofile and a path in a perfbot-profile-* directory", args)
	}
	if _, err := os.Stat(filepath.Dir(args[1])); !os.IsNotExist(err) {
		t.Errorf("the profile's directory is still there after the run (stat: %v)", err)
	}

	// Each run gets a fresh path.
	again := runHelper(t, "profile", Spec{Name: "prove", CPUProfileFlag: "-cpuprofile", Env: []string{profileFile(t, data)}})
	if a := givenArgs(t, again); len(a) != 2 || a[1] == args[1] {
		t.Errorf("second run got %q, first %q; want another path", a, args)
	}
}

func TestRunReadsTheMemoryProfileBesideTheCPUProfile(t *testing.T) {
	t.Parallel()
	cpu := gzipped(t)
	mem := append(gzipped(t), 0) // another file
	memFile := filepath.Join(t.TempDir(), "mem.src")
	if err := os.WriteFile(memFile, mem, 0o644); err != nil {
		t.Fatal(err)
	}
	res := runHelper(t, "profile", Spec{Name: "prove", CPUProfileFlag: "-cpuprofile", MemProfileFlag: "-memprofile",
		Env: []string{profileFile(t, cpu), memEnv + "=" + memFile}})
	wantStatus(t, res, analysis.StatusOK)
	want := []analysis.Profile{
		{Benchmark: "prove", Kind: analysis.ProfileCPU, Data: cpu},
		{Benchmark: "prove", Kind: analysis.ProfileMem, Data: mem},
	}
	if !reflect.DeepEqual(res.Run.Profiles, want) || len(res.Warnings) != 0 {
		t.Errorf("Profiles = %+v, warnings %q; want the CPU profile, then the memory profile", res.Run.Profiles, res.Warnings)
	}
	args := givenArgs(t, res)
	if len(args) != 4 || args[0] != "-cpuprofile" || args[2] != "-memprofile" ||
		filepath.Dir(args[1]) != filepath.Dir(args[3]) || filepath.Base(args[3]) != "mem.pprof" {
		t.Errorf("the benchmark got arguments %q, want -cpuprofile PATH -memprofile PATH in one directory", args)
	}

	// Asked for alone, a memory profile that is not written is a
	// warning that names it.
	res = runHelper(t, "profile", Spec{Name: "prove", MemProfileFlag: "-memprofile"})
	wantStatus(t, res, analysis.StatusOK)
	if res.Run.Profiles != nil || len(res.Warnings) != 1 ||
		!strings.Contains(res.Warnings[0], "no memory profile: the benchmark wrote no file at the path perfbot gave after -memprofile") {
		t.Errorf("Profiles %v, warnings %q; want a warning about the memory profile", res.Run.Profiles, res.Warnings)
	}
}

func TestRunAppendsNoProfileFlagUnlessAsked(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "profile", Spec{Name: "prove", Env: []string{profileFile(t, gzipped(t))}})
	wantStatus(t, res, analysis.StatusOK)
	if args := givenArgs(t, res); len(args) != 0 {
		t.Errorf("the benchmark got arguments %q, want none", args)
	}
	if res.Run.Profiles != nil || len(res.Warnings) != 0 {
		t.Errorf("Profiles %v, warnings %q; want neither", res.Run.Profiles, res.Warnings)
	}
}

func TestRunWarnsOfAMissingOrEmptyProfile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"ignores the flag", nil, "wrote no file at the path perfbot gave after -cpuprofile; check that the program takes -cpuprofile FILE"},
		{"writes an empty file", []string{profileFile(t, nil)}, "the file the benchmark got after -cpuprofile is empty"},
	} {
		res := runHelper(t, "profile", Spec{Name: "prove", CPUProfileFlag: "-cpuprofile", Env: tc.env})
		wantStatus(t, res, analysis.StatusOK)
		if res.Run.Profiles != nil {
			t.Errorf("%s: Profiles = %+v, want none", tc.name, res.Run.Profiles)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], tc.want) {
			t.Errorf("%s: warnings %q, want one saying %q", tc.name, res.Warnings, tc.want)
		}
		if len(res.Run.Samples) == 0 {
			t.Errorf("%s: no samples; the run's measurements must stay", tc.name)
		}
	}
}

func TestRunKeepsNoProfileOverTheLimit(t *testing.T) {
	t.Parallel()
	data := gzipped(t)
	limit := int64(len(data))
	res := runHelper(t, "profile", Spec{Name: "prove", CPUProfileFlag: "-cpuprofile", MaxProfileBytes: limit, Env: []string{profileFile(t, data)}})
	wantStatus(t, res, analysis.StatusOK)
	if len(res.Run.Profiles) != 1 || !bytes.Equal(res.Run.Profiles[0].Data, data) || len(res.Warnings) != 0 {
		t.Errorf("a profile of exactly the limit: Profiles %d, warnings %q; want it kept", len(res.Run.Profiles), res.Warnings)
	}
	res = runHelper(t, "profile", Spec{Name: "prove", CPUProfileFlag: "-cpuprofile", MaxProfileBytes: limit - 1, Env: []string{profileFile(t, data)}})
	wantStatus(t, res, analysis.StatusOK)
	want := "CPU profile not stored: it is " + itoa(limit) + " bytes, over the limit of " + itoa(limit-1) + " bytes"
	if res.Run.Profiles != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], want) {
		t.Errorf("a profile over the limit: Profiles %d, warnings %q; want none and a warning %q", len(res.Run.Profiles), res.Warnings, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestRunKeepsNoProfileOfAFailedRun(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "profile", Spec{Name: "prove", CPUProfileFlag: "-cpuprofile", Env: []string{profileFile(t, gzipped(t)), failEnv + "=1"}})
	wantStatus(t, res, analysis.StatusCrashed)
	if res.Run.Profiles != nil {
		t.Errorf("a crashed run kept %d profiles, want none", len(res.Run.Profiles))
	}
}

func TestRunRejectsBadProfileSpecs(t *testing.T) {
	t.Parallel()
	for name, spec := range map[string]Spec{
		"profile without a name":        {Args: []string{"/bin/true"}, CPUProfileFlag: "-cpuprofile"},
		"memory profile without a name": {Args: []string{"/bin/true"}, MemProfileFlag: "-memprofile"},
		"negative limit":                {Args: []string{"/bin/true"}, Name: "b", CPUProfileFlag: "-cpuprofile", MaxProfileBytes: -1},
	} {
		if _, err := Run(context.Background(), spec); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
