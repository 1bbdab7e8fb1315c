package execute

import (
	"fmt"
	"strconv"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/system"
)

// GPU telemetry: while a benchmark process runs, a sampler polls every
// device NVML reports (its clocks, power, temperature, utilization,
// memory in use and clock event reasons) and reads each device's energy
// counter when the process starts and when it exits. The readings become
// process samples (see ProcessBenchmark), one set per device. Telemetry
// never fails a run: what NVML cannot tell is recorded in
// Result.Unavailable, and the sampler holds up neither the start of the
// process nor the end of Run by more than one sampling interval.

// The sampling interval when Spec.TelemetryInterval is 0: the run's time
// limit divided by telemetryPerTimeout, within [minTelemetryInterval,
// maxTelemetryInterval], or defaultTelemetryInterval without a limit.
const (
	defaultTelemetryInterval = 100 * time.Millisecond
	minTelemetryInterval     = 20 * time.Millisecond
	maxTelemetryInterval     = 500 * time.Millisecond
	telemetryPerTimeout      = 500
)

// telemetryInterval returns how often the GPUs are sampled during a run
// of s.
func (s Spec) telemetryInterval() time.Duration {
	switch {
	case s.TelemetryInterval > 0:
		return s.TelemetryInterval
	case s.Timeout > 0:
		return min(max(s.Timeout/telemetryPerTimeout, minTelemetryInterval), maxTelemetryInterval)
	}
	return defaultTelemetryInterval
}

// throttleReasons is the mask of NVML clock event reasons that count as
// throttling in gpu-throttled-fraction/run: every reason but GPU idle
// (0x1) and applications clocks setting (0x2), which are the driver or an
// administrator choosing a clock rather than a limit pulling it down. It
// counts SW power cap (0x4), HW slowdown (0x8), sync boost (0x10), SW
// thermal slowdown (0x20), HW thermal slowdown (0x40), HW power brake
// (0x80), display clock setting (0x100), board limit (0x200),
// reliability (0x400) and any reason a later driver adds.
const throttleReasons = ^uint64(nvml.ClocksEventReasonGpuIdle | nvml.ClocksEventReasonApplicationsClocksSetting)

// A gpuField is one value read from a device at every sample.
type gpuField int

const (
	fieldReasons gpuField = iota
	fieldSMClock
	fieldMemClock
	fieldPower
	fieldTemp
	fieldUtil
	fieldMemUsed
	numGPUFields
)

// gpuFieldNames are the Result.Unavailable keys of the fields, before a
// device's "/gpu=N" suffix.
var gpuFieldNames = [numGPUFields]string{
	fieldReasons:  "gpu-clock-reasons",
	fieldSMClock:  "gpu-sm-clock",
	fieldMemClock: "gpu-mem-clock",
	fieldPower:    "gpu-power",
	fieldTemp:     "gpu-temp",
	fieldUtil:     "gpu-util",
	fieldMemUsed:  "gpu-mem-used",
}

// telemetryKey is the Result.Unavailable key of GPU telemetry as a whole:
// NVML could not be used at all.
const telemetryKey = "gpu-telemetry"

// A sampler polls NVML about every GPU for the lifetime of one benchmark
// process.
type sampler struct {
	lib      nvml.Interface
	interval time.Duration
	vis      visibility // only the devices the benchmark sees
}

// A sampling is a sampler at work; stop ends it.
type sampling struct {
	interval time.Duration
	ready    <-chan struct{} // closed once the first readings are taken or NVML has failed
	stopc    chan struct{}
	done     <-chan gpuTelemetry
	late     bool      // ready was not closed when start returned
	started  time.Time // when start returned: the process starts just after
}

// start starts sampling. It initializes NVML and reads the energy
// counters on another goroutine, waiting for that at most one interval:
// when NVML is slower, the process starts anyway and the telemetry begins
// late.
func (s sampler) start() *sampling {
	ready := make(chan struct{})
	done := make(chan gpuTelemetry, 1)
	g := &sampling{interval: s.interval, ready: ready, stopc: make(chan struct{}), done: done}
	go s.run(ready, g.stopc, done)
	t := time.NewTimer(s.interval)
	select {
	case <-ready:
	case <-t.C:
		g.late = true
	}
	t.Stop()
	g.started = time.Now()
	return g
}

// stop ends the sampling and returns its summary: the process samples of
// every device, warnings, and the measurements that could not be taken.
// It waits for the final readings at most one interval; when NVML does
// not answer in time, the run has no GPU telemetry.
func (g *sampling) stop() ([]analysis.Sample, []string, map[string]string) {
	close(g.stopc)
	t := time.NewTimer(g.interval)
	defer t.Stop()
	var tel gpuTelemetry
	select {
	case tel = <-g.done:
	case <-t.C:
		select {
		case <-g.ready:
			return nil, nil, map[string]string{telemetryKey: fmt.Sprintf(
				"nvml did not answer within %v (the sampling interval) of the benchmark's exit: no GPU telemetry for this run", g.interval)}
		default:
			return nil, nil, map[string]string{telemetryKey: "nvml had not finished initializing when the benchmark exited: " +
				"no GPU telemetry for this run (enable persistence mode, nvidia-smi -pm 1, to make NVML start fast)"}
		}
	}
	var warnings []string
	if g.late && len(tel.devices) > 0 {
		warnings = append(warnings, fmt.Sprintf("NVML took longer than the %v sampling interval to initialize: GPU telemetry began %v after the benchmark "+
			"and misses the start of the run (enable persistence mode, nvidia-smi -pm 1, to make NVML start fast)",
			g.interval, max(tel.began.Sub(g.started), 0).Round(time.Millisecond)))
	}
	samples, w, unavailable := tel.summary()
	return samples, append(warnings, w...), unavailable
}

// gpuTelemetry is what a sampling read.
type gpuTelemetry struct {
	devices     []*gpuDevice
	began       time.Time // the energy counters' first reading
	ended       time.Time // stop
	unavailable map[string]string
}

// A gpuDevice is one device's readings.
type gpuDevice struct {
	dev    nvml.Device
	label  string // "GPU", "GPU 1"
	suffix string // of its names: "" with one device, "/gpu=N" with several
	// failed says why a field's call failed; a failed field is never
	// called again and has no summary.
	failed   [numGPUFields]string
	readings []gpuReading
	// energy holds the counter's readings in mJ at the start and the
	// end; energyWhy says why the counter is not used.
	energy    [2]uint64
	energyWhy string
}

// A gpuReading is one sample of one device.
type gpuReading struct {
	at                time.Time
	reasons           uint64
	smClock, memClock uint32 // MHz
	power             uint32 // mW
	temp              uint32 // °C
	util              nvml.Utilization
	memUsed           uint64 // bytes
}

// run is the sampling goroutine. It calls nothing but Init unless Init
// succeeds, and then Shutdown once it has handed over its readings.
func (s sampler) run(ready chan<- struct{}, stop <-chan struct{}, done chan<- gpuTelemetry) {
	if ret := s.lib.Init(); ret != nvml.SUCCESS {
		close(ready)
		done <- gpuTelemetry{unavailable: map[string]string{telemetryKey: "nvml init: " + system.NVMLReason(ret)}}
		return
	}
	done <- s.sample(ready, stop)
	s.lib.Shutdown()
}

// uuids returns the UUID of each of the n devices when vis names one
// by it ("" where NVML cannot say); otherwise pick needs only their
// number, and no other worker's device is touched.
func (s sampler) uuids(n int) []string {
	u := make([]string, n)
	if !s.vis.byUUID() {
		return u
	}
	for i := range n {
		if d, ret := s.lib.DeviceGetHandleByIndex(i); ret == nvml.SUCCESS {
			u[i], _ = d.GetUUID()
		}
	}
	return u
}

// sample finds the devices, reads their energy counters, closes ready
// and then reads every device at each tick until stop is closed. At stop
// it reads the energy counters again, and every device once more if it
// has no reading yet.
func (s sampler) sample(ready chan<- struct{}, stop <-chan struct{}) gpuTelemetry {
	tel := gpuTelemetry{unavailable: map[string]string{}}
	n, ret := s.lib.DeviceGetCount()
	switch {
	case ret != nvml.SUCCESS:
		tel.unavailable[telemetryKey] = "nvml device count: " + system.NVMLReason(ret)
	case n == 0:
		tel.unavailable[telemetryKey] = "nvml reports no GPU"
	}
	if len(tel.unavailable) > 0 {
		close(ready)
		return tel
	}
	idx, note := s.vis.pick(s.uuids(n))
	if note != "" {
		tel.unavailable[telemetryKey+"-visible"] = note
	}
	if len(idx) == 0 {
		tel.unavailable[telemetryKey] = "no GPU is visible to the benchmark (" + EnvVisibleDevices + "=" + strconv.Quote(s.vis.value) + ")"
		close(ready)
		return tel
	}
	reasons, noReasons := clockReasonsFunc(s.lib)
	for _, i := range idx {
		d := &gpuDevice{label: "GPU"}
		if len(idx) > 1 {
			d.label = fmt.Sprintf("GPU %d", i)
			d.suffix = fmt.Sprintf("/gpu=%d", i)
		}
		var ret nvml.Return
		if d.dev, ret = s.lib.DeviceGetHandleByIndex(i); ret != nvml.SUCCESS {
			tel.unavailable[telemetryKey+d.suffix] = "nvml device handle: " + system.NVMLReason(ret)
			continue
		}
		d.failed[fieldReasons] = noReasons
		if d.energy[0], ret = d.dev.GetTotalEnergyConsumption(); ret != nvml.SUCCESS {
			d.energyWhy = "nvml: " + system.NVMLReason(ret)
		}
		tel.devices = append(tel.devices, d)
	}
	tel.began = time.Now()
	close(ready)

	tick := time.NewTicker(s.interval)
	defer tick.Stop()
poll:
	for {
		select {
		case <-stop:
			break poll
		case <-tick.C:
			for _, d := range tel.devices {
				select {
				case <-stop:
					break poll
				default:
				}
				d.read(reasons)
			}
		}
	}
	tel.ended = time.Now()
	for _, d := range tel.devices {
		if len(d.readings) == 0 {
			d.read(reasons)
		}
		if d.energyWhy != "" {
			continue
		}
		if d.energy[1], ret = d.dev.GetTotalEnergyConsumption(); ret != nvml.SUCCESS {
			d.energyWhy = "nvml: " + system.NVMLReason(ret)
		} else if d.energy[1] < d.energy[0] {
			d.energyWhy = "the counter went backwards (was the driver reloaded?)"
		}
	}
	return tel
}

// clockReasonsFunc returns the NVML call that reads a device's current
// clock event reasons: nvmlDeviceGetCurrentClocksEventReasons where the
// driver has it (R535 and later), else its older name
// nvmlDeviceGetCurrentClocksThrottleReasons. Calling a function that the
// loaded library lacks kills the process, so each is looked up first;
// when neither is there it returns why.
func clockReasonsFunc(lib nvml.Interface) (func(nvml.Device) (uint64, nvml.Return), string) {
	ext := lib.Extensions()
	if ext.LookupSymbol("nvmlDeviceGetCurrentClocksEventReasons") == nil {
		return nvml.Device.GetCurrentClocksEventReasons, ""
	}
	if ext.LookupSymbol("nvmlDeviceGetCurrentClocksThrottleReasons") == nil {
		return nvml.Device.GetCurrentClocksThrottleReasons, ""
	}
	return nil, "nvml: the driver library has neither nvmlDeviceGetCurrentClocksEventReasons nor nvmlDeviceGetCurrentClocksThrottleReasons (update the NVIDIA driver)"
}

// read takes one reading of every field of d that has not failed.
func (d *gpuDevice) read(reasons func(nvml.Device) (uint64, nvml.Return)) {
	r := gpuReading{at: time.Now()}
	var ret nvml.Return
	if d.failed[fieldReasons] == "" {
		r.reasons, ret = reasons(d.dev)
		d.check(fieldReasons, ret)
	}
	if d.failed[fieldSMClock] == "" {
		r.smClock, ret = d.dev.GetClockInfo(nvml.CLOCK_SM)
		d.check(fieldSMClock, ret)
	}
	if d.failed[fieldMemClock] == "" {
		r.memClock, ret = d.dev.GetClockInfo(nvml.CLOCK_MEM)
		d.check(fieldMemClock, ret)
	}
	if d.failed[fieldPower] == "" {
		r.power, ret = d.dev.GetPowerUsage()
		d.check(fieldPower, ret)
	}
	if d.failed[fieldTemp] == "" {
		r.temp, ret = d.dev.GetTemperature(nvml.TEMPERATURE_GPU)
		d.check(fieldTemp, ret)
	}
	if d.failed[fieldUtil] == "" {
		r.util, ret = d.dev.GetUtilizationRates()
		d.check(fieldUtil, ret)
	}
	if d.failed[fieldMemUsed] == "" {
		var mem nvml.Memory
		mem, ret = d.dev.GetMemoryInfo()
		r.memUsed = mem.Used
		d.check(fieldMemUsed, ret)
	}
	d.readings = append(d.readings, r)
}

// check records why field failed, if it did.
func (d *gpuDevice) check(field gpuField, ret nvml.Return) {
	if ret != nvml.SUCCESS {
		d.failed[field] = "nvml: " + system.NVMLReason(ret)
	}
}

// summary turns the readings into process samples.
func (t gpuTelemetry) summary() (samples []analysis.Sample, warnings []string, unavailable map[string]string) {
	unavailable = t.unavailable
	for _, d := range t.devices {
		s, w := d.summary(t.began, t.ended, unavailable)
		samples = append(samples, s...)
		warnings = append(warnings, w...)
	}
	return samples, warnings, unavailable
}

// summary returns d's process samples, named ProcessBenchmark plus d's
// suffix, and records what it cannot summarize in unavailable: a field
// that failed even once has no summary, so that none covers only part of
// the run.
//
// The energy is the counter's difference, or, without it, the power
// readings integrated over [began, ended] (linearly between readings, and
// held from the window's ends to the first and last). The clock minima
// and means cover the readings in which the GPU was busy (no GPU-idle
// clock event reason or, without reasons, a non-zero utilization), since
// an idle GPU drops its clocks by design; the other fields cover every
// reading.
func (d *gpuDevice) summary(began, ended time.Time, unavailable map[string]string) (samples []analysis.Sample, warnings []string) {
	add := func(unit string, v float64) {
		samples = append(samples, analysis.Sample{
			Key:   analysis.Key{Benchmark: ProcessBenchmark + d.suffix, Unit: unit},
			Value: v,
		})
	}
	ok := func(f gpuField) bool { return d.failed[f] == "" }
	for f, why := range d.failed {
		if why != "" {
			unavailable[gpuFieldNames[f]+d.suffix] = why
		}
	}
	rs := d.readings
	field := func(f func(gpuReading) float64) []float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return v
	}

	switch {
	case d.energyWhy == "":
		add("gpu-energy-J/run", float64(d.energy[1]-d.energy[0])/1e3)
	case ok(fieldPower):
		add("gpu-energy-J/run", integrate(rs, began, ended)/1e3)
		warnings = append(warnings, fmt.Sprintf("%s energy counter unavailable (%s): gpu-energy-J/run%s integrates the power readings over the run instead",
			d.label, d.energyWhy, d.suffix))
	default:
		unavailable["gpu-energy"+d.suffix] = d.energyWhy + "; no power readings to integrate either"
	}
	if ok(fieldPower) {
		add("gpu-power-mean-W/run", mean(field(func(r gpuReading) float64 { return float64(r.power) }))/1e3)
	}

	var busy []gpuReading
	for _, r := range rs {
		switch {
		case ok(fieldReasons) && r.reasons&nvml.ClocksEventReasonGpuIdle != 0:
		case !ok(fieldReasons) && ok(fieldUtil) && r.util.Gpu == 0:
		default:
			busy = append(busy, r)
		}
	}
	if len(busy) == 0 {
		busy = rs // idle throughout: its clocks are still what it ran at
	}
	if ok(fieldSMClock) {
		v := make([]float64, len(busy))
		for i, r := range busy {
			v[i] = float64(r.smClock)
		}
		add("gpu-sm-clock-min-MHz/run", minOf(v))
		add(analysis.GPUSMClockMeanUnit, mean(v))
	}
	if ok(fieldMemClock) {
		v := make([]float64, len(busy))
		for i, r := range busy {
			v[i] = float64(r.memClock)
		}
		add("gpu-mem-clock-min-MHz/run", minOf(v))
	}
	if ok(fieldTemp) {
		add("gpu-temp-max-C/run", maxOf(field(func(r gpuReading) float64 { return float64(r.temp) })))
	}
	if ok(fieldUtil) {
		add("gpu-util-mean-pct/run", mean(field(func(r gpuReading) float64 { return float64(r.util.Gpu) })))
		add("gpu-mem-util-mean-pct/run", mean(field(func(r gpuReading) float64 { return float64(r.util.Memory) })))
	}
	if ok(fieldMemUsed) {
		add("gpu-mem-used-max-B/run", maxOf(field(func(r gpuReading) float64 { return float64(r.memUsed) })))
	}
	if ok(fieldReasons) {
		throttled := 0
		for _, r := range rs {
			if r.reasons&throttleReasons != 0 {
				throttled++
			}
		}
		add(analysis.GPUThrottledFractionUnit, float64(throttled)/float64(len(rs)))
	}
	return samples, warnings
}

// integrate returns the integral of the readings' power (mW) over
// [began, ended] in mJ: linear between readings, held at the first and
// last reading's value out to the window's ends.
func integrate(rs []gpuReading, began, ended time.Time) float64 {
	if len(rs) == 0 {
		return 0
	}
	first, last := rs[0], rs[len(rs)-1]
	e := float64(first.power) * max(first.at.Sub(began).Seconds(), 0)
	for i := 1; i < len(rs); i++ {
		e += (float64(rs[i-1].power) + float64(rs[i].power)) / 2 * rs[i].at.Sub(rs[i-1].at).Seconds()
	}
	return e + float64(last.power)*max(ended.Sub(last.at).Seconds(), 0)
}

func mean(v []float64) float64 {
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}
