package execute

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
)

func TestFingerprintFillsGPUFieldsFromNVML(t *testing.T) {
	t.Parallel()
	server := dgxh200.New()
	e := fingerprint(context.Background(), server, visibility{})
	if e.GPUCount != 8 || len(e.GPUs) != 8 {
		t.Fatalf("GPUCount %d, %d GPUs; want 8 (unavailable: %v)", e.GPUCount, len(e.GPUs), e.Unavailable)
	}
	uuids := map[string]bool{}
	for i, g := range e.GPUs {
		if g.Index != i || g.Name != "NVIDIA H200 141GB HBM3e" || !strings.HasPrefix(g.UUID, "GPU-") || g.MemTotal != 144384<<20 {
			t.Errorf("GPU %d = %+v", i, g)
		}
		uuids[g.UUID] = true
	}
	if len(uuids) != 8 {
		t.Errorf("%d distinct UUIDs, want 8", len(uuids))
	}
	if e.GPUDriverVersion != "550.54.15" || e.CUDADriverVersion != "12.4" {
		t.Errorf("driver %q, CUDA %q; want 550.54.15, 12.4", e.GPUDriverVersion, e.CUDADriverVersion)
	}
	for k, v := range e.Unavailable {
		if strings.HasPrefix(k, "gpu") || strings.Contains(k, "driver") {
			t.Errorf("unavailable %s: %s", k, v)
		}
	}
	if len(server.ShutdownCalls()) != 1 {
		t.Errorf("Shutdown called %d times, want 1", len(server.ShutdownCalls()))
	}
}

func TestFingerprintCallsNothingButInitWhenInitFails(t *testing.T) {
	t.Parallel()
	// Every other method of this mock is nil and panics when called, as
	// the real library kills the process.
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	e := fingerprint(context.Background(), lib, visibility{})
	if e.GPUCount != 0 || e.GPUs != nil || e.GPUDriverVersion != "" || e.CUDADriverVersion != "" {
		t.Errorf("GPU fields set without NVML: %+v", e)
	}
	want := "nvml init: ERROR_LIBRARY_NOT_FOUND (no NVIDIA driver library libnvidia-ml.so.1 on this machine)"
	if e.Unavailable["gpu"] != want {
		t.Errorf("gpu unavailable %q, want %q", e.Unavailable["gpu"], want)
	}
	if len(lib.InitCalls()) != 1 {
		t.Errorf("Init called %d times", len(lib.InitCalls()))
	}
}

func TestFingerprintRecordsAFailingDevice(t *testing.T) {
	t.Parallel()
	server := dgxh200.New()
	server.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 1 {
			return nil, nvml.ERROR_GPU_IS_LOST
		}
		return server.Devices[i], nvml.SUCCESS
	}
	e := fingerprint(context.Background(), server, visibility{})
	if len(e.GPUs) != 8 || e.GPUs[1].Name != "" || e.GPUs[2].Name == "" {
		t.Errorf("GPUs %+v", e.GPUs)
	}
	if got := e.Unavailable["gpu[1]"]; got != "nvml device handle: ERROR_GPU_IS_LOST" {
		t.Errorf("gpu[1] unavailable %q", got)
	}
}

func TestFingerprintGivesUpOnNVMLWhenCtxEnds(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	lib := &mock.Interface{InitFunc: func() nvml.Return {
		<-release
		return nvml.ERROR_TIMEOUT
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := fingerprint(ctx, lib, visibility{})
	if e.Unavailable["gpu"] != "nvml: context canceled" {
		t.Errorf("gpu unavailable %q", e.Unavailable["gpu"])
	}
	if e.Hostname == "" || e.CPUs == 0 {
		t.Errorf("the rest was not read: %+v", e)
	}
}

func TestFingerprintWorksHere(t *testing.T) {
	t.Parallel()
	e := Fingerprint(context.Background())
	host, _ := os.Hostname()
	if e.Hostname != host || e.CPUs < 1 || e.NumCPU != runtime.NumCPU() || e.Kernel == "" ||
		e.GoVersion != runtime.Version() || e.OS != runtime.GOOS || e.Arch != runtime.GOARCH || e.MemTotal < 256<<20 {
		t.Errorf("fingerprint %+v", e)
	}
	if runtime.GOARCH == "amd64" && e.CPUModel == "" {
		t.Errorf("no CPU model: %v", e.Unavailable["cpu_model"])
	}
	if why, ok := e.Unavailable["perf_event_paranoid"]; ok {
		t.Errorf("perf_event_paranoid unavailable: %s", why)
	}
	if len(e.GPUs) == 0 {
		// No NVIDIA driver here: NVML must say so, and the process is alive.
		why := e.Unavailable["gpu"]
		if !strings.Contains(why, "ERROR_LIBRARY_NOT_FOUND") && !strings.Contains(why, "ERROR_DRIVER_NOT_LOADED") {
			t.Errorf("no GPUs and gpu unavailable %q", why)
		}
		if _, err := os.Stat("/proc/driver/nvidia/version"); err == nil {
			t.Errorf("the NVIDIA kernel driver is loaded but NVML found no GPU: %q", why)
		}
	} else {
		for _, g := range e.GPUs {
			if g.Name == "" || g.UUID == "" || g.MemTotal == 0 {
				t.Errorf("GPU %+v", g)
			}
		}
		if e.GPUDriverVersion == "" || e.CUDADriverVersion == "" {
			t.Errorf("driver %q, CUDA %q", e.GPUDriverVersion, e.CUDADriverVersion)
		}
	}
	b, _ := json.MarshalIndent(e, "", "  ")
	t.Logf("ID %s\n%s", e.ID(), b)
}

func TestEnvIDIdentifiesTheMachineNotItsSoftware(t *testing.T) {
	t.Parallel()
	e := fingerprint(context.Background(), dgxh200.New(), visibility{})
	e.MemTotal = 64 << 30
	id := e.ID()
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(id) {
		t.Fatalf("ID %q is not 12 hex digits", id)
	}
	same := e
	same.Kernel, same.GoVersion, same.GPUDriverVersion, same.CUDADriverVersion = "other", "go0", "1", "2"
	same.PerfEventParanoid, same.NumCPU = 99, 1
	same.MemTotal += 100 << 20 // a kernel that reserves less
	same.Unavailable = map[string]string{"x": "y"}
	if same.ID() != id {
		t.Errorf("software and settings changed the ID")
	}
	for name, change := range map[string]func(*Env){
		"hostname": func(e *Env) { e.Hostname += "x" },
		"cpu":      func(e *Env) { e.CPUModel += "x" },
		"cpus":     func(e *Env) { e.CPUs++ },
		"memory":   func(e *Env) { e.MemTotal += 8 << 30 },
		"gpu":      func(e *Env) { e.GPUs = append([]GPU(nil), e.GPUs...); e.GPUs[3].UUID = "GPU-other" },
		"no gpus":  func(e *Env) { e.GPUs = nil },
	} {
		other := e
		change(&other)
		if other.ID() == id {
			t.Errorf("a different %s keeps the ID", name)
		}
	}
}
