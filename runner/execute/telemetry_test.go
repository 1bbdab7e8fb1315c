package execute

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/perfbot/perfbot/analysis"
)

// nvmlWith returns an NVML library whose Init and Shutdown succeed, which
// reports devs and whose driver has every symbol unless missing names it.
func nvmlWith(devs []*mock.Device, missing ...string) *mock.Interface {
	return &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return devs[i], nvml.SUCCESS
		},
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

// The readings of steadyGPU.
const (
	steadyPowerMW     = 250_000
	steadySMClock     = 1980
	steadyMemClock    = 2619
	steadyUtilGPU     = 80
	steadyUtilMem     = 30
	steadyEnergyStart = 1_000_000 // mJ
	steadyEnergyRun   = 12_345    // mJ between the first reading and any later one
)

// steadyGPU returns a device that reads steadyPowerMW, steadySMClock,
// steadyMemClock, steadyUtilGPU and steadyUtilMem every time, no clock
// event reason, a temperature of 50 + i%5 °C and (1 + i%3) GiB of memory
// in use at its i-th reading of each, and an energy counter that stands
// at steadyEnergyStart at the first reading and steadyEnergyRun further at
// every later one.
func steadyGPU() *mock.Device {
	var mu sync.Mutex
	var temps, mems, energies int
	return &mock.Device{
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) { return nvml.ClocksEventReasonNone, nvml.SUCCESS },
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			switch c {
			case nvml.CLOCK_SM:
				return steadySMClock, nvml.SUCCESS
			case nvml.CLOCK_MEM:
				return steadyMemClock, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		},
		GetPowerUsageFunc: func() (uint32, nvml.Return) { return steadyPowerMW, nvml.SUCCESS },
		GetTemperatureFunc: func(s nvml.TemperatureSensors) (uint32, nvml.Return) {
			if s != nvml.TEMPERATURE_GPU {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			mu.Lock()
			defer mu.Unlock()
			temps++
			return 50 + uint32(temps-1)%5, nvml.SUCCESS
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: steadyUtilGPU, Memory: steadyUtilMem}, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			mu.Lock()
			defer mu.Unlock()
			mems++
			return nvml.Memory{Total: 141 << 30, Used: (1 + uint64(mems-1)%3) << 30}, nvml.SUCCESS
		},
		GetTotalEnergyConsumptionFunc: func() (uint64, nvml.Return) {
			mu.Lock()
			defer mu.Unlock()
			energies++
			if energies == 1 {
				return steadyEnergyStart, nvml.SUCCESS
			}
			return steadyEnergyStart + steadyEnergyRun, nvml.SUCCESS
		},
	}
}

// gpuSamples returns the samples of benchmark whose unit starts with
// "gpu-", by unit, failing the test on a unit seen twice.
func gpuSamples(t *testing.T, res Result, benchmark string) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, s := range res.Run.Samples {
		if s.Benchmark != benchmark || !strings.HasPrefix(s.Unit, "gpu-") {
			continue
		}
		if s.Phase != "" {
			t.Errorf("GPU sample %v has a phase", s.Key)
		}
		if _, dup := m[s.Unit]; dup {
			t.Errorf("%s %s: two samples", benchmark, s.Unit)
		}
		m[s.Unit] = s.Value
	}
	return m
}

// wantGPU checks that got holds exactly the units of want with their
// values, to 1e-9 relative.
func wantGPU(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for unit, w := range want {
		g, ok := got[unit]
		switch {
		case !ok:
			t.Errorf("no %s sample", unit)
		case math.Abs(g-w) > 1e-9*math.Abs(w):
			t.Errorf("%s = %v, want %v", unit, g, w)
		}
	}
	for unit, g := range got {
		if _, ok := want[unit]; !ok {
			t.Errorf("unexpected sample %s = %v", unit, g)
		}
	}
}

// noGPUUnavailable fails the test if any GPU measurement is unavailable.
func noGPUUnavailable(t *testing.T, res Result) {
	t.Helper()
	for k, v := range res.Unavailable {
		if strings.HasPrefix(k, "gpu") {
			t.Errorf("unavailable %s: %s", k, v)
		}
	}
}

// waitShutdown waits up to 5 s for lib's Shutdown, which the sampler
// calls after handing over its readings.
func waitShutdown(t *testing.T, lib *mock.Interface) {
	t.Helper()
	for range 500 {
		if len(lib.ShutdownCalls()) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(lib.ShutdownCalls()); n != 1 || len(lib.InitCalls()) != 1 {
		t.Errorf("Init called %d times, Shutdown %d times; want 1 and 1", len(lib.InitCalls()), n)
	}
}

func TestRunSummarizesGPUTelemetry(t *testing.T) {
	t.Parallel()
	dev := steadyGPU()
	lib := nvmlWith([]*mock.Device{dev})
	res := runHelperNVML(t, "nap", Spec{TelemetryInterval: 20 * time.Millisecond}, lib)
	wantStatus(t, res, analysis.StatusOK)
	noGPUUnavailable(t, res)
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q", res.Warnings)
	}

	// Every field is read once per reading; the energy counter at the
	// start and at the stop only.
	n := len(dev.GetPowerUsageCalls())
	if n < 3 {
		t.Fatalf("%d readings in a 300 ms run sampled every 20 ms, want at least 3", n)
	}
	for name, calls := range map[string]int{
		"clock reasons": len(dev.GetCurrentClocksEventReasonsCalls()),
		"clocks":        len(dev.GetClockInfoCalls()) / 2,
		"temperature":   len(dev.GetTemperatureCalls()),
		"utilization":   len(dev.GetUtilizationRatesCalls()),
		"memory":        len(dev.GetMemoryInfoCalls()),
	} {
		if calls != n {
			t.Errorf("%s read %d times, power %d times", name, calls, n)
		}
	}
	if e := len(dev.GetTotalEnergyConsumptionCalls()); e != 2 {
		t.Errorf("energy counter read %d times, want 2", e)
	}
	waitShutdown(t, lib)

	wantGPU(t, gpuSamples(t, res, ProcessBenchmark), map[string]float64{
		"gpu-energy-J/run":           12.345,
		"gpu-power-mean-W/run":       250,
		"gpu-sm-clock-min-MHz/run":   1980,
		"gpu-sm-clock-mean-MHz/run":  1980,
		"gpu-mem-clock-min-MHz/run":  2619,
		"gpu-temp-max-C/run":         float64(50 + min(n-1, 4)),
		"gpu-util-mean-pct/run":      80,
		"gpu-mem-util-mean-pct/run":  30,
		"gpu-mem-used-max-B/run":     float64(min(n, 3) << 30),
		"gpu-throttled-fraction/run": 0,
	})
	// The readings fill the run: about one per interval of its wall time.
	if want := res.Wall.Seconds() / 0.020; float64(n) < want/3 || float64(n) > want+2 {
		t.Errorf("%d readings in %v at 20 ms, want about %.0f", n, res.Wall, want)
	}
	t.Logf("%d readings in %v", n, res.Wall)
}

func TestRunGPUThrottledFractionAndBusyClocks(t *testing.T) {
	t.Parallel()
	// The i-th reading's clock event reasons; the clock reading that
	// follows depends on them.
	reasonsAt := func(i int) uint64 {
		switch i % 4 {
		case 0:
			return nvml.ClocksEventReasonApplicationsClocksSetting // not throttling
		case 1:
			return nvml.ClocksEventReasonSwPowerCap
		case 2:
			return nvml.ClocksThrottleReasonHwSlowdown | nvml.ClocksThrottleReasonHwThermalSlowdown
		}
		return nvml.ClocksEventReasonGpuIdle // not throttling, and not busy
	}
	clockAt := func(i int) uint32 {
		switch i % 4 {
		case 0:
			return 1980
		case 1, 2:
			return 1500 + 10*uint32(i%7)
		}
		return 345 // idle
	}
	dev := steadyGPU()
	reading := -1 // only the sampling goroutine touches it
	dev.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
		reading++
		return reasonsAt(reading), nvml.SUCCESS
	}
	dev.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		if c == nvml.CLOCK_MEM {
			return 2619, nvml.SUCCESS
		}
		return clockAt(reading), nvml.SUCCESS
	}
	lib := nvmlWith([]*mock.Device{dev})
	res := runHelperNVML(t, "nap", Spec{TelemetryInterval: 20 * time.Millisecond}, lib)
	wantStatus(t, res, analysis.StatusOK)
	noGPUUnavailable(t, res)

	n := len(dev.GetCurrentClocksEventReasonsCalls())
	if n < 4 {
		t.Fatalf("%d readings, want at least 4", n)
	}
	throttled := 0
	var busy []float64
	for i := range n {
		if i%4 == 1 || i%4 == 2 {
			throttled++
		}
		if i%4 != 3 {
			busy = append(busy, float64(clockAt(i)))
		}
	}
	var sum float64
	for _, c := range busy {
		sum += c
	}
	got := gpuSamples(t, res, ProcessBenchmark)
	for unit, want := range map[string]float64{
		"gpu-throttled-fraction/run": float64(throttled) / float64(n),
		"gpu-sm-clock-min-MHz/run":   slices.Min(busy),
		"gpu-sm-clock-mean-MHz/run":  sum / float64(len(busy)),
	} {
		if g := got[unit]; math.Abs(g-want) > 1e-9*want {
			t.Errorf("%s = %v, want %v (%d readings)", unit, g, want, n)
		}
	}
	if f := got["gpu-throttled-fraction/run"]; f <= 0.25 || f >= 0.75 {
		t.Errorf("throttled fraction %v, want about a half", f)
	}
	t.Logf("%d readings: %v", n, got)
}

func TestRunRecordsAnUnsupportedGPUFieldOnceAndSummarizesTheRest(t *testing.T) {
	t.Parallel()
	dev := steadyGPU()
	dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	lib := nvmlWith([]*mock.Device{dev})
	res := runHelperNVML(t, "nap", Spec{TelemetryInterval: 20 * time.Millisecond}, lib)
	wantStatus(t, res, analysis.StatusOK)

	if got := res.Unavailable["gpu-power"]; got != "nvml: ERROR_NOT_SUPPORTED" {
		t.Errorf("gpu-power unavailable %q, want %q", got, "nvml: ERROR_NOT_SUPPORTED")
	}
	for k, v := range res.Unavailable {
		if strings.HasPrefix(k, "gpu") && k != "gpu-power" {
			t.Errorf("unavailable %s: %s", k, v)
		}
	}
	if c := len(dev.GetPowerUsageCalls()); c != 1 {
		t.Errorf("power read %d times after it failed, want once", c)
	}
	n := len(dev.GetTemperatureCalls())
	if n < 3 {
		t.Fatalf("%d readings, want at least 3", n)
	}
	wantGPU(t, gpuSamples(t, res, ProcessBenchmark), map[string]float64{
		"gpu-energy-J/run":           12.345, // from the counter, which works
		"gpu-sm-clock-min-MHz/run":   1980,
		"gpu-sm-clock-mean-MHz/run":  1980,
		"gpu-mem-clock-min-MHz/run":  2619,
		"gpu-temp-max-C/run":         float64(50 + min(n-1, 4)),
		"gpu-util-mean-pct/run":      80,
		"gpu-mem-util-mean-pct/run":  30,
		"gpu-mem-used-max-B/run":     float64(min(n, 3) << 30),
		"gpu-throttled-fraction/run": 0,
	})
	waitShutdown(t, lib)
}

func TestRunIntegratesGPUPowerWithoutTheEnergyCounter(t *testing.T) {
	t.Parallel()
	dev := steadyGPU()
	dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	res := runHelperNVML(t, "nap", Spec{TelemetryInterval: 20 * time.Millisecond}, nvmlWith([]*mock.Device{dev}))
	wantStatus(t, res, analysis.StatusOK)
	noGPUUnavailable(t, res)
	if c := len(dev.GetTotalEnergyConsumptionCalls()); c != 1 {
		t.Errorf("energy counter read %d times after it failed, want once", c)
	}
	want := "GPU energy counter unavailable (nvml: ERROR_NOT_SUPPORTED): gpu-energy-J/run integrates the power readings over the run instead"
	if !slices.Contains(res.Warnings, want) {
		t.Errorf("warnings %q lack %q", res.Warnings, want)
	}
	// A steady 250 W over the sampling window, which spans the process's
	// wall time and at most a little more on either side.
	e := gpuSamples(t, res, ProcessBenchmark)["gpu-energy-J/run"]
	if lo, hi := 250*res.Wall.Seconds(), 250*(res.Wall.Seconds()+0.2); e < lo || e > hi {
		t.Errorf("gpu-energy-J/run = %v, want 250 W × the %v run: %v to %v", e, res.Wall, lo, hi)
	}

	// Without power readings either, there is no energy.
	dev = steadyGPU()
	dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	res = runHelperNVML(t, "bench", Spec{}, nvmlWith([]*mock.Device{dev}))
	if got, want := res.Unavailable["gpu-energy"], "nvml: ERROR_NOT_SUPPORTED; no power readings to integrate either"; got != want {
		t.Errorf("gpu-energy unavailable %q, want %q", got, want)
	}
	got := gpuSamples(t, res, ProcessBenchmark)
	if _, ok := got["gpu-energy-J/run"]; ok || len(got) != 8 {
		t.Errorf("samples %v: want the 8 other than energy and power", got)
	}
}

func TestRunWithoutNVMLHasNoGPUSamplesAndCallsOnlyInit(t *testing.T) {
	t.Parallel()
	// Every other method of this mock is nil and panics when called, as
	// the real library kills the process.
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	res := runHelperNVML(t, "bench", Spec{}, lib)
	wantStatus(t, res, analysis.StatusOK)
	for _, s := range res.Run.Samples {
		if strings.HasPrefix(s.Unit, "gpu-") || strings.Contains(s.Benchmark, "gpu=") {
			t.Errorf("GPU sample %v without NVML", s)
		}
	}
	want := "nvml init: ERROR_LIBRARY_NOT_FOUND (no NVIDIA driver library libnvidia-ml.so.1 on this machine)"
	if got := res.Unavailable["gpu-telemetry"]; got != want {
		t.Errorf("gpu-telemetry unavailable %q, want %q", got, want)
	}
	for k := range res.Unavailable {
		if strings.HasPrefix(k, "gpu") && k != "gpu-telemetry" {
			t.Errorf("unavailable %s besides gpu-telemetry", k)
		}
	}
	if len(lib.InitCalls()) != 1 {
		t.Errorf("Init called %d times, want 1", len(lib.InitCalls()))
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
	// The rest of the run is measured as ever.
	if processValue(t, res, "wall-sec/run") <= 0 {
		t.Error("no wall time")
	}
}

func TestRunSamplesARunShorterThanTheIntervalOnceAtStop(t *testing.T) {
	t.Parallel()
	dev := steadyGPU()
	lib := nvmlWith([]*mock.Device{dev})
	start := time.Now()
	res := runHelperNVML(t, "bench", Spec{TelemetryInterval: 10 * time.Second}, lib)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Run took %v: the 10 s interval held it up", elapsed)
	}
	wantStatus(t, res, analysis.StatusOK)
	noGPUUnavailable(t, res)
	if c := len(dev.GetPowerUsageCalls()); c != 1 {
		t.Errorf("power read %d times, want once at stop", c)
	}
	wantGPU(t, gpuSamples(t, res, ProcessBenchmark), map[string]float64{
		"gpu-energy-J/run":           12.345,
		"gpu-power-mean-W/run":       250,
		"gpu-sm-clock-min-MHz/run":   1980,
		"gpu-sm-clock-mean-MHz/run":  1980,
		"gpu-mem-clock-min-MHz/run":  2619,
		"gpu-temp-max-C/run":         50,
		"gpu-util-mean-pct/run":      80,
		"gpu-mem-util-mean-pct/run":  30,
		"gpu-mem-used-max-B/run":     1 << 30,
		"gpu-throttled-fraction/run": 0,
	})
	waitShutdown(t, lib)
}

func TestRunKeepsSeveralGPUsApart(t *testing.T) {
	t.Parallel()
	a, b := steadyGPU(), steadyGPU()
	b.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 400_000, nvml.SUCCESS }
	b.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	lib := nvmlWith([]*mock.Device{a, b})
	res := runHelperNVML(t, "nap", Spec{Name: "prove", TelemetryInterval: 20 * time.Millisecond}, lib)
	wantStatus(t, res, analysis.StatusOK)

	if got := gpuSamples(t, res, "process/benchmark=prove"); len(got) != 0 {
		t.Errorf("GPU samples without a device: %v", got)
	}
	g0 := gpuSamples(t, res, "process/benchmark=prove/gpu=0")
	g1 := gpuSamples(t, res, "process/benchmark=prove/gpu=1")
	if g0["gpu-power-mean-W/run"] != 250 || g1["gpu-power-mean-W/run"] != 400 {
		t.Errorf("power: gpu 0 %v W, gpu 1 %v W; want 250 and 400", g0["gpu-power-mean-W/run"], g1["gpu-power-mean-W/run"])
	}
	if len(g0) != 10 || len(g1) != 9 {
		t.Errorf("gpu 0 has %d samples, gpu 1 %d; want 10 and 9 (no temperature): %v %v", len(g0), len(g1), g0, g1)
	}
	if _, ok := g1["gpu-temp-max-C/run"]; ok {
		t.Error("gpu 1 has a temperature")
	}
	if got := res.Unavailable["gpu-temp/gpu=1"]; got != "nvml: ERROR_NOT_SUPPORTED" {
		t.Errorf("gpu-temp/gpu=1 unavailable %q", got)
	}
	if _, ok := res.Unavailable["gpu-temp"]; ok {
		t.Error("gpu-temp unavailable without a device suffix")
	}
	// The wall time and counters keep the plain named benchmark.
	for _, s := range res.Run.Samples {
		if s.Unit == "wall-sec/run" && s.Benchmark != "process/benchmark=prove" {
			t.Errorf("wall time under %q", s.Benchmark)
		}
	}
	waitShutdown(t, lib)
}

func TestRunReadsClockReasonsUnderTheNameTheDriverHas(t *testing.T) {
	t.Parallel()
	// An older driver: only the throttle-reasons name. The mock panics if
	// the event-reasons function is called.
	dev := steadyGPU()
	dev.GetCurrentClocksEventReasonsFunc = nil
	dev.GetCurrentClocksThrottleReasonsFunc = func() (uint64, nvml.Return) {
		return nvml.ClocksThrottleReasonSwThermalSlowdown, nvml.SUCCESS
	}
	res := runHelperNVML(t, "bench", Spec{}, nvmlWith([]*mock.Device{dev}, "nvmlDeviceGetCurrentClocksEventReasons"))
	noGPUUnavailable(t, res)
	if f := gpuSamples(t, res, ProcessBenchmark)["gpu-throttled-fraction/run"]; f != 1 {
		t.Errorf("throttled fraction %v, want 1 (SW thermal slowdown throughout)", f)
	}

	// Neither name: no reasons, and the clocks use utilization to tell
	// busy readings.
	dev = steadyGPU()
	dev.GetCurrentClocksEventReasonsFunc = nil
	res = runHelperNVML(t, "bench", Spec{}, nvmlWith([]*mock.Device{dev},
		"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"))
	if got := res.Unavailable["gpu-clock-reasons"]; !strings.Contains(got, "neither nvmlDeviceGetCurrentClocksEventReasons nor") {
		t.Errorf("gpu-clock-reasons unavailable %q", got)
	}
	got := gpuSamples(t, res, ProcessBenchmark)
	if _, ok := got["gpu-throttled-fraction/run"]; ok || got["gpu-sm-clock-mean-MHz/run"] != 1980 {
		t.Errorf("samples %v: want no throttled fraction and the SM clock", got)
	}
}

func TestRunDoesNotWaitForSlowNVML(t *testing.T) {
	t.Parallel()
	// Init takes 2 s: the run starts after one interval and ends before
	// Init does.
	release := make(chan struct{})
	lib := nvmlWith([]*mock.Device{steadyGPU()})
	lib.InitFunc = func() nvml.Return {
		select {
		case <-release:
		case <-time.After(2 * time.Second):
		}
		return nvml.SUCCESS
	}
	start := time.Now()
	res := runHelperNVML(t, "bench", Spec{TelemetryInterval: 50 * time.Millisecond}, lib)
	elapsed := time.Since(start)
	close(release)
	wantStatus(t, res, analysis.StatusOK)
	if elapsed > 1500*time.Millisecond {
		t.Errorf("Run took %v: it waited for NVML's Init", elapsed)
	}
	if got := res.Unavailable["gpu-telemetry"]; !strings.HasPrefix(got, "nvml had not finished initializing when the benchmark exited") {
		t.Errorf("gpu-telemetry unavailable %q", got)
	}
	if got := gpuSamples(t, res, ProcessBenchmark); len(got) != 0 {
		t.Errorf("GPU samples %v", got)
	}
	waitShutdown(t, lib) // Init did succeed in the end

	// Init takes 150 ms of a 300 ms run: the telemetry begins late and
	// says so.
	dev := steadyGPU()
	lib = nvmlWith([]*mock.Device{dev})
	lib.InitFunc = func() nvml.Return {
		time.Sleep(150 * time.Millisecond)
		return nvml.SUCCESS
	}
	res = runHelperNVML(t, "nap", Spec{TelemetryInterval: 20 * time.Millisecond}, lib)
	noGPUUnavailable(t, res)
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "NVML took longer than the 20ms sampling interval to initialize: GPU telemetry began ") {
		t.Errorf("warnings %q, want one that the telemetry began late", res.Warnings)
	}
	if got := gpuSamples(t, res, ProcessBenchmark)["gpu-power-mean-W/run"]; got != 250 {
		t.Errorf("gpu-power-mean-W/run = %v, want 250", got)
	}

	// NVML hangs in the middle of the run: Run still returns within an
	// interval of the exit, without GPU samples.
	hang := make(chan struct{})
	defer close(hang)
	dev = steadyGPU()
	var calls sync.Mutex
	powerCalls := 0
	dev.GetPowerUsageFunc = func() (uint32, nvml.Return) {
		calls.Lock()
		powerCalls++
		n := powerCalls
		calls.Unlock()
		if n == 3 {
			<-hang
		}
		return steadyPowerMW, nvml.SUCCESS
	}
	start = time.Now()
	res = runHelperNVML(t, "nap", Spec{TelemetryInterval: 20 * time.Millisecond}, nvmlWith([]*mock.Device{dev}))
	if elapsed := time.Since(start); elapsed > res.Wall+time.Second {
		t.Errorf("Run took %v for a %v run", elapsed, res.Wall)
	}
	want := "nvml did not answer within 20ms (the sampling interval) of the benchmark's exit: no GPU telemetry for this run"
	if got := res.Unavailable["gpu-telemetry"]; got != want {
		t.Errorf("gpu-telemetry unavailable %q, want %q", got, want)
	}
	if got := gpuSamples(t, res, ProcessBenchmark); len(got) != 0 {
		t.Errorf("GPU samples %v", got)
	}
}

func TestTelemetryIntervalFitsTheRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec Spec
		want time.Duration
	}{
		{Spec{}, 100 * time.Millisecond},
		{Spec{Timeout: 20 * time.Second}, 40 * time.Millisecond},
		{Spec{Timeout: 100 * time.Second}, 200 * time.Millisecond},
		{Spec{Timeout: time.Second}, 20 * time.Millisecond}, // 2 ms, clamped
		{Spec{Timeout: time.Hour}, 500 * time.Millisecond},  // 7.2 s, clamped
		{Spec{Timeout: time.Hour, TelemetryInterval: 5 * time.Millisecond}, 5 * time.Millisecond},
		{Spec{TelemetryInterval: 2 * time.Second}, 2 * time.Second},
	} {
		if got := tc.spec.telemetryInterval(); got != tc.want {
			t.Errorf("timeout %v, interval %v: got %v, want %v", tc.spec.Timeout, tc.spec.TelemetryInterval, got, tc.want)
		}
	}
	for _, bad := range []time.Duration{-time.Second, time.Microsecond} {
		_, err := Run(context.Background(), Spec{Args: []string{"/bin/true"}, TelemetryInterval: bad})
		if err == nil || !strings.Contains(err.Error(), "must be at least 1ms") {
			t.Errorf("interval %v: error %v", bad, err)
		}
	}
}

// TestRunGPUTelemetryWorksHere samples whatever GPUs this machine has
// through the real NVML, or checks that NVML says why there are none.
func TestRunGPUTelemetryWorksHere(t *testing.T) {
	t.Parallel()
	// Hold NVML open, as persistence mode does, so that the sampler's own
	// Init is quick even where the driver would otherwise set the GPUs up
	// afresh (which can take longer than the run).
	lib := nvml.New()
	if lib.Init() == nvml.SUCCESS {
		defer lib.Shutdown()
	}
	res := runHelper(t, "nap", Spec{})
	wantStatus(t, res, analysis.StatusOK)
	var benchmarks []string
	for _, s := range res.Run.Samples {
		if strings.HasPrefix(s.Unit, "gpu-") && !slices.Contains(benchmarks, s.Benchmark) {
			benchmarks = append(benchmarks, s.Benchmark)
		}
	}
	if len(benchmarks) == 0 {
		why := res.Unavailable["gpu-telemetry"]
		if !strings.Contains(why, "ERROR_LIBRARY_NOT_FOUND") && !strings.Contains(why, "ERROR_DRIVER_NOT_LOADED") {
			t.Errorf("no GPU samples and gpu-telemetry unavailable %q", why)
		}
		if _, err := os.Stat("/proc/driver/nvidia/version"); err == nil {
			t.Errorf("the NVIDIA kernel driver is loaded but there is no GPU telemetry: %q", why)
		}
		return
	}
	for _, b := range benchmarks {
		got := gpuSamples(t, res, b)
		t.Logf("%s: %v", b, got)
		if len(benchmarks) > 1 && !strings.HasPrefix(b, "process/gpu=") || len(benchmarks) == 1 && b != ProcessBenchmark {
			t.Errorf("GPU samples under %q with %d GPUs", b, len(benchmarks))
		}
		checks := map[string][2]float64{
			"gpu-energy-J/run":           {0.01, 1e4},
			"gpu-power-mean-W/run":       {1, 2000},
			"gpu-sm-clock-mean-MHz/run":  {100, 5000},
			"gpu-sm-clock-min-MHz/run":   {100, 5000},
			"gpu-mem-clock-min-MHz/run":  {100, 20000},
			"gpu-temp-max-C/run":         {5, 110},
			"gpu-util-mean-pct/run":      {0, 100},
			"gpu-throttled-fraction/run": {0, 1},
		}
		for unit, r := range checks {
			v, ok := got[unit]
			if !ok {
				t.Errorf("%s: no %s (unavailable: %v)", b, unit, res.Unavailable)
			} else if v < r[0] || v > r[1] {
				t.Errorf("%s: %s = %v, want %v to %v", b, unit, v, r[0], r[1])
			}
		}
	}
	for k, v := range res.Unavailable {
		if strings.HasPrefix(k, "gpu") {
			t.Logf("unavailable %s: %s", k, v)
		}
	}
	for _, w := range res.Warnings {
		t.Logf("warning: %s", w)
	}
}
