package system

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// The clocks of tunedGPU, in MHz.
const (
	maxSM, maxMem = 1980, 3201
)

// tune gives d the answers of a GPU set up for benchmarks: persistence
// on, application clocks at the maximum, no clock event reason, ECC on
// with no change pending, and no process.
func tune(d *mock.Device) *mock.Device {
	d.GetPersistenceModeFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_ENABLED, nvml.SUCCESS }
	d.GetApplicationsClockFunc = func(c nvml.ClockType) (uint32, nvml.Return) { return clockOf(c) }
	d.GetMaxClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) { return clockOf(c) }
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return nvml.ClocksEventReasonNone, nvml.SUCCESS }
	d.GetEccModeFunc = func() (nvml.EnableState, nvml.EnableState, nvml.Return) {
		return nvml.FEATURE_ENABLED, nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	if d.GetNameFunc == nil {
		d.GetNameFunc = func() (string, nvml.Return) { return "NVIDIA H200", nvml.SUCCESS }
	}
	if d.GetUUIDFunc == nil {
		d.GetUUIDFunc = func() (string, nvml.Return) { return "GPU-0000", nvml.SUCCESS }
	}
	return d
}

func clockOf(c nvml.ClockType) (uint32, nvml.Return) {
	switch c {
	case nvml.CLOCK_SM:
		return maxSM, nvml.SUCCESS
	case nvml.CLOCK_MEM:
		return maxMem, nvml.SUCCESS
	}
	return 0, nvml.ERROR_INVALID_ARGUMENT
}

// libWith returns an NVML library that reports devs, whose driver has
// every symbol but missing.
func libWith(devs []nvml.Device, missing ...string) *mock.Interface {
	return &mock.Interface{
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "550.54.15", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 12040, nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc:     func(i int) (nvml.Device, nvml.Return) { return devs[i], nvml.SUCCESS },
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(name string) error {
				if slices.Contains(missing, name) {
					return fmt.Errorf("undefined symbol: %s", name)
				}
				return nil
			}}
		},
	}
}

// inspectGPUs runs Inspect on the tuned fixture host with lib.
func inspectGPUs(t *testing.T, lib nvml.Interface) Report {
	t.Helper()
	return Inspect(context.Background(), Options{Root: fixture(t, nil), NVML: lib, Interval: time.Millisecond, Exclude: []int{os.Getpid()}})
}

// gpuFinding returns the finding named name of GPU i.
func gpuFinding(t *testing.T, r Report, i int, name string) Finding {
	t.Helper()
	if i >= len(r.GPUs) {
		t.Fatalf("no GPU %d in %+v (nvml: %+v)", i, r.GPUs, r.NVML)
	}
	for _, f := range r.GPUs[i].Findings {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("GPU %d has no finding %q: %+v", i, name, r.GPUs[i].Findings)
	return Finding{}
}

func TestTunedGPUHasNoWarnings(t *testing.T) {
	t.Parallel()
	lib := libWith([]nvml.Device{tune(&mock.Device{})})
	r := inspectGPUs(t, lib)
	if r.NVML.Status != Info || r.NVML.State != "driver 550.54.15, CUDA 12.4, 1 GPU" {
		t.Errorf("nvml %+v", r.NVML)
	}
	if len(r.GPUs) != 1 || r.GPUs[0].Name != "NVIDIA H200" || r.GPUs[0].UUID != "GPU-0000" {
		t.Fatalf("GPUs %+v", r.GPUs)
	}
	want := map[string]Finding{
		"persistence-mode": {Status: OK, State: "on"},
		"app-clocks":       {Status: OK, State: "SM 1980 of max 1980 MHz, memory 3201 of max 3201 MHz"},
		"clock-reasons":    {Status: OK, State: "none"},
		"ecc":              {Status: Info, State: "on"},
		"gpu-processes":    {Status: OK, State: "none"},
	}
	if len(r.GPUs[0].Findings) != len(want) {
		t.Errorf("findings %+v", r.GPUs[0].Findings)
	}
	for name, w := range want {
		if f := gpuFinding(t, r, 0, name); f.Status != w.Status || f.State != w.State || f.Advice != "" || f.Source == "" {
			t.Errorf("%s: %+v, want %s %q", name, f, w.Status, w.State)
		}
	}
	if w := r.Warnings(); len(w) != 0 {
		t.Errorf("warnings %+v", w)
	}
	if len(lib.ShutdownCalls()) != 1 {
		t.Errorf("Shutdown called %d times, want 1", len(lib.ShutdownCalls()))
	}
}

func TestPersistenceOffWarns(t *testing.T) {
	t.Parallel()
	d := tune(&mock.Device{})
	d.GetPersistenceModeFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_DISABLED, nvml.SUCCESS }
	r := inspectGPUs(t, libWith([]nvml.Device{tune(&mock.Device{}), d}))
	f := gpuFinding(t, r, 1, "persistence-mode")
	if f.Status != Warn || !strings.HasPrefix(f.State, "off: ") || f.Advice != "sudo nvidia-smi -i 1 -pm 1 (or run nvidia-persistenced)" {
		t.Errorf("persistence off: %+v", f)
	}
	w := r.Warnings()
	if len(w) != 1 || w[0].Name != "gpu1/persistence-mode" {
		t.Errorf("warnings %+v, want gpu1/persistence-mode alone", w)
	}
}

func TestApplicationClocksBelowMaxWarnWithBothNumbers(t *testing.T) {
	t.Parallel()
	d := tune(&mock.Device{})
	d.GetApplicationsClockFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		if c == nvml.CLOCK_SM {
			return 1410, nvml.SUCCESS
		}
		return clockOf(c)
	}
	r := inspectGPUs(t, libWith([]nvml.Device{d}))
	f := gpuFinding(t, r, 0, "app-clocks")
	if f.Status != Warn || !strings.HasPrefix(f.State, "SM 1410 of max 1980 MHz, memory 3201 of max 3201 MHz") {
		t.Errorf("app clocks: %s %q", f.Status, f.State)
	}
	if !strings.HasPrefix(f.Advice, "sudo nvidia-smi -i 0 -ac 3201,1980 ") {
		t.Errorf("advice %q", f.Advice)
	}
}

func TestThrottleReasonWarnsNamingIt(t *testing.T) {
	t.Parallel()
	d := tune(&mock.Device{})
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
		return nvml.ClocksThrottleReasonHwSlowdown | nvml.ClocksEventReasonSwPowerCap, nvml.SUCCESS
	}
	idle := tune(&mock.Device{})
	idle.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return nvml.ClocksEventReasonGpuIdle, nvml.SUCCESS }
	r := inspectGPUs(t, libWith([]nvml.Device{d, idle}))
	f := gpuFinding(t, r, 0, "clock-reasons")
	if f.Status != Warn || f.State != "throttling now: SW power cap (0x4), HW slowdown (0x8)" || f.Advice == "" {
		t.Errorf("throttled: %+v", f)
	}
	if f := gpuFinding(t, r, 1, "clock-reasons"); f.Status != OK || f.State != "GPU idle (0x1): not throttling" {
		t.Errorf("idle: %+v", f)
	}
}

func TestClockReasonsFallBackToTheThrottleCallOnOldDrivers(t *testing.T) {
	t.Parallel()
	d := tune(&mock.Device{})
	d.GetCurrentClocksEventReasonsFunc = nil // panics if called
	d.GetCurrentClocksThrottleReasonsFunc = func() (uint64, nvml.Return) {
		return nvml.ClocksThrottleReasonHwThermalSlowdown, nvml.SUCCESS
	}
	r := inspectGPUs(t, libWith([]nvml.Device{d}, "nvmlDeviceGetCurrentClocksEventReasons"))
	f := gpuFinding(t, r, 0, "clock-reasons")
	if f.Status != Warn || f.State != "throttling now: HW thermal slowdown (0x40)" || f.Source != "nvml: nvmlDeviceGetCurrentClocksThrottleReasons" {
		t.Errorf("old driver: %+v", f)
	}
	r = inspectGPUs(t, libWith([]nvml.Device{d}, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"))
	if f := gpuFinding(t, r, 0, "clock-reasons"); f.Status != Unknown || !strings.Contains(f.State, "update the NVIDIA driver") {
		t.Errorf("neither call: %+v", f)
	}
}

func TestAnotherProcessOnTheGPUWarnsWithItsPID(t *testing.T) {
	t.Parallel()
	const stranger = 99999999 // no such process: no command name
	d := tune(&mock.Device{})
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{
			{Pid: stranger, UsedGpuMemory: 3 << 30},
			{Pid: uint32(os.Getpid()), UsedGpuMemory: 1 << 30}, // excluded: perfbot's own
		}, nvml.SUCCESS
	}
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: stranger, UsedGpuMemory: 3 << 30}, {Pid: 1, UsedGpuMemory: ^uint64(0)}}, nvml.SUCCESS
	}
	r := inspectGPUs(t, libWith([]nvml.Device{d}))
	f := gpuFinding(t, r, 0, "gpu-processes")
	// pid 1's command name comes from the fixture root, which has none.
	if want := "in use by 1, 99999999 (3.0 GiB)"; f.Status != Warn || f.State != want || f.Advice == "" {
		t.Errorf("gpu-processes %+v, want warn %q", f, want)
	}
}

func TestUnsupportedNVMLCallsAreInfo(t *testing.T) {
	t.Parallel()
	d := tune(&mock.Device{})
	d.GetPersistenceModeFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetApplicationsClockFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetEccModeFunc = func() (nvml.EnableState, nvml.EnableState, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_GPU_IS_LOST }
	r := inspectGPUs(t, libWith([]nvml.Device{d}))
	for _, name := range []string{"persistence-mode", "app-clocks", "ecc"} {
		if f := gpuFinding(t, r, 0, name); f.Status != Info || f.State != "not supported on this device" {
			t.Errorf("%s: %+v", name, f)
		}
	}
	// Compute processes still answer.
	if f := gpuFinding(t, r, 0, "gpu-processes"); f.Status != OK || f.State != "none" {
		t.Errorf("gpu-processes: %+v", f)
	}
	if f := gpuFinding(t, r, 0, "clock-reasons"); f.Status != Unknown || f.State != "nvml: ERROR_GPU_IS_LOST" {
		t.Errorf("clock-reasons: %+v", f)
	}
}

func TestPendingECCChangeWarns(t *testing.T) {
	t.Parallel()
	d := tune(&mock.Device{})
	d.GetEccModeFunc = func() (nvml.EnableState, nvml.EnableState, nvml.Return) {
		return nvml.FEATURE_ENABLED, nvml.FEATURE_DISABLED, nvml.SUCCESS
	}
	r := inspectGPUs(t, libWith([]nvml.Device{d}))
	f := gpuFinding(t, r, 0, "ecc")
	if f.Status != Warn || !strings.HasPrefix(f.State, "on now, off after the next GPU reset or reboot") || !strings.HasSuffix(f.Advice, "sudo nvidia-smi -i 0 -e 1") {
		t.Errorf("ecc: %+v", f)
	}
}

func TestFailedNVMLInitCallsNothingElse(t *testing.T) {
	t.Parallel()
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	// Every other call the package makes fails the test; those it does
	// not make are nil and panic.
	called := func(name string) { t.Errorf("%s called after Init failed", name) }
	lib.ShutdownFunc = func() nvml.Return { called("Shutdown"); return nvml.SUCCESS }
	lib.DeviceGetCountFunc = func() (int, nvml.Return) { called("DeviceGetCount"); return 0, nvml.SUCCESS }
	lib.DeviceGetHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { called("DeviceGetHandleByIndex"); return nil, nvml.SUCCESS }
	lib.SystemGetDriverVersionFunc = func() (string, nvml.Return) { called("SystemGetDriverVersion"); return "", nvml.SUCCESS }
	lib.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { called("SystemGetCudaDriverVersion"); return 0, nvml.SUCCESS }
	lib.ExtensionsFunc = func() nvml.ExtendedInterface { called("Extensions"); return &mock.ExtendedInterface{} }

	r := inspectGPUs(t, lib)
	want := "nvml unavailable: init: ERROR_LIBRARY_NOT_FOUND (no NVIDIA driver library libnvidia-ml.so.1 on this machine)"
	if r.NVML.Status != Unknown || r.NVML.State != want {
		t.Errorf("nvml %+v, want unknown %q", r.NVML, want)
	}
	if len(r.GPUs) != 0 || len(lib.InitCalls()) != 1 {
		t.Errorf("GPUs %+v, %d Init calls", r.GPUs, len(lib.InitCalls()))
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "nvml                 unknown  "+want) {
		t.Errorf("text %q (%v) does not show the nvml finding", text.String(), err)
	}
}

func TestDGXH200ReportsEveryGPU(t *testing.T) {
	t.Parallel()
	s := dgxh200.New()
	for _, d := range s.Devices {
		tune(&d.(*server.Device).Device)
	}
	r := inspectGPUs(t, s)
	if r.NVML.State != "driver 550.54.15, CUDA 12.4, 8 GPUs" || len(r.GPUs) != 8 {
		t.Fatalf("nvml %+v, %d GPUs", r.NVML, len(r.GPUs))
	}
	for i, g := range r.GPUs {
		if g.Index != i || !strings.Contains(g.Name, "H200") || g.UUID == "" || len(g.Findings) != 5 {
			t.Errorf("GPU %d: %+v", i, g)
		}
	}
	if w := r.Warnings(); len(w) != 0 {
		t.Errorf("warnings %+v", w)
	}
}

func TestADeviceWithoutAHandleIsUnknown(t *testing.T) {
	t.Parallel()
	lib := libWith([]nvml.Device{tune(&mock.Device{}), tune(&mock.Device{})})
	lib.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 1 {
			return nil, nvml.ERROR_GPU_IS_LOST
		}
		return tune(&mock.Device{}), nvml.SUCCESS
	}
	r := inspectGPUs(t, lib)
	if len(r.GPUs) != 2 || len(r.GPUs[0].Findings) != 5 {
		t.Fatalf("GPUs %+v", r.GPUs)
	}
	if f := gpuFinding(t, r, 1, "device"); f.Status != Unknown || f.State != "nvml device handle: ERROR_GPU_IS_LOST" {
		t.Errorf("lost GPU: %+v", f)
	}
}
