package system

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// sampleReport is a report with every part: findings with and without
// advice, processes, NVML and two GPUs, one of them with warnings.
func sampleReport() Report {
	return Report{
		Time:     time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Hostname: "gpu-runner-1",
		Kernel:   "6.8.0-45-generic",
		CPUs:     64,
		Interval: 1003 * time.Millisecond,
		Findings: []Finding{
			{Name: "cpu-governor", Status: Warn, State: "powersave on cpu 0-63 (intel_pstate): the clock follows the load",
				Advice: "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor", Source: "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"},
			{Name: "aslr", Status: OK, State: "2: full randomization", Source: "/proc/sys/kernel/randomize_va_space"},
			{Name: "perf-event-paranoid", Status: Unknown, State: "cannot read /proc/sys/kernel/perf_event_paranoid: permission denied", Source: "/proc/sys/kernel/perf_event_paranoid"},
		},
		Processes: []Process{{PID: 4242, Comm: "python3", CPUPct: 99.5}, {PID: 17, Comm: "kworker/3:1", CPUPct: 2}},
		NVML:      Finding{Name: "nvml", Status: Info, State: "driver 550.54.15, CUDA 12.4, 2 GPUs", Source: "nvml"},
		GPUs: []GPU{
			{Index: 0, Name: "NVIDIA H200", UUID: "GPU-aaaa", Findings: []Finding{
				{Name: "persistence-mode", Status: OK, State: "on", Source: "nvml: nvmlDeviceGetPersistenceMode"},
			}},
			{Index: 1, Name: "NVIDIA H200", Findings: []Finding{
				{Name: "persistence-mode", Status: Warn, State: "off", Advice: "sudo nvidia-smi -i 1 -pm 1", Source: "nvml: nvmlDeviceGetPersistenceMode"},
				{Name: "gpu-processes", Status: Warn, State: "in use by 777 python3 (3.0 GiB)", Advice: "stop them", Source: "nvml"},
			}},
		},
	}
}

func TestWriteTextMatchesGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := sampleReport().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "report.txt")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if b.String() != string(want) {
		t.Errorf("text differs from %s (run go test ./runner/system -update if the change is intended)\n--- got:\n%s\n--- want:\n%s", path, b.String(), want)
	}
}

func TestWarningsNameTheirGPU(t *testing.T) {
	t.Parallel()
	var names []string
	for _, f := range sampleReport().Warnings() {
		names = append(names, f.Name)
	}
	if want := []string{"cpu-governor", "gpu1/persistence-mode", "gpu1/gpu-processes"}; !reflect.DeepEqual(names, want) {
		t.Errorf("warnings %q, want %q", names, want)
	}
}

func TestWriteJSONRoundTripsWithSnakeCaseFields(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip: %+v, want %+v", back, r)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"time", "hostname", "kernel", "cpus", "interval_ns", "findings", "processes", "nvml", "gpus"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("JSON has no %q: %s", k, b.String())
		}
	}
	if !bytes.Contains(b.Bytes(), []byte(`"cpu_pct": 99.5`)) || bytes.Contains(b.Bytes(), []byte(`"advice": ""`)) {
		t.Errorf("JSON fields: %s", b.String())
	}
}
