package system

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// notSupported is the state of a finding whose NVML call returned
// ERROR_NOT_SUPPORTED.
const notSupported = "not supported on this device"

// nvmlResult is what NVML said.
type nvmlResult struct {
	nvml Finding
	gpus []GPU
}

// inspectNVML asks lib about the driver and every GPU. It calls nothing
// but Init unless Init succeeds (calling anything else after a failed
// Init kills the process), and then Shutdown at the end. ours reports
// whether a process using a GPU is perfbot's own.
func inspectNVML(lib nvml.Interface, f fsys, ours func(pid int) bool) nvmlResult {
	res := nvmlResult{nvml: Finding{Name: "nvml", Source: "nvml"}}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		res.nvml.Status = Unknown
		res.nvml.State = "nvml unavailable: init: " + NVMLReason(ret)
		return res
	}
	defer lib.Shutdown()

	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		res.nvml.Status = Unknown
		res.nvml.State = "nvml device count: " + NVMLReason(ret)
		return res
	}
	var parts []string
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		parts = append(parts, "driver "+v)
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		parts = append(parts, fmt.Sprintf("CUDA %d.%d", v/1000, v%1000/10))
	}
	switch n {
	case 0:
		parts = append(parts, "no GPU")
	case 1:
		parts = append(parts, "1 GPU")
	default:
		parts = append(parts, fmt.Sprintf("%d GPUs", n))
	}
	res.nvml.Status = Info
	res.nvml.State = strings.Join(parts, ", ")

	reasons := clockReasonsFunc(lib)
	for i := range n {
		g := GPU{Index: i}
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			g.Name = "unknown"
			g.Findings = []Finding{{Name: "device", Status: Unknown, Source: "nvml: nvmlDeviceGetHandleByIndex",
				State: "nvml device handle: " + NVMLReason(ret)}}
			res.gpus = append(res.gpus, g)
			continue
		}
		if g.Name, ret = d.GetName(); ret != nvml.SUCCESS {
			g.Name = "unknown (nvml: " + NVMLReason(ret) + ")"
		}
		if g.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
			g.UUID = ""
		}
		g.Findings = []Finding{
			persistence(i, d),
			appClocks(i, d),
			clockReasons(i, d, reasons),
			ecc(i, d),
			gpuProcesses(d, f, ours),
		}
		res.gpus = append(res.gpus, g)
	}
	return res
}

// nvmlFailed is the finding of an NVML call that failed: information if
// the device does not support it, else unknown.
func nvmlFailed(name, call string, ret nvml.Return) Finding {
	f := Finding{Name: name, Source: "nvml: " + call, Status: Unknown, State: "nvml: " + NVMLReason(ret)}
	if ret == nvml.ERROR_NOT_SUPPORTED {
		f.Status, f.State = Info, notSupported
	}
	return f
}

// persistence reads the persistence mode: off is a warning, since the
// driver then tears the GPU down whenever no process holds it, and every
// run pays its initialization and starts at idle clocks.
func persistence(i int, d nvml.Device) Finding {
	const name, call = "persistence-mode", "nvmlDeviceGetPersistenceMode"
	mode, ret := d.GetPersistenceMode()
	if ret != nvml.SUCCESS {
		return nvmlFailed(name, call, ret)
	}
	f := Finding{Name: name, Source: "nvml: " + call, Status: OK, State: "on"}
	if mode != nvml.FEATURE_ENABLED {
		f.Status = Warn
		f.State = "off: the driver deinitializes the GPU whenever no process holds it, so each run pays its initialization and starts from idle clocks"
		f.Advice = fmt.Sprintf("sudo nvidia-smi -i %d -pm 1 (or run nvidia-persistenced)", i)
	}
	return f
}

// appClocks compares the application clocks (what the GPU runs a
// process at before power and thermal limits) with the maximum clocks,
// for SM and memory: either below its maximum is a warning.
func appClocks(i int, d nvml.Device) Finding {
	const name = "app-clocks"
	const source = "nvml: nvmlDeviceGetApplicationsClock, nvmlDeviceGetMaxClockInfo"
	var app, most [2]uint32
	for k, c := range []nvml.ClockType{nvml.CLOCK_SM, nvml.CLOCK_MEM} {
		var ret nvml.Return
		if app[k], ret = d.GetApplicationsClock(c); ret != nvml.SUCCESS {
			return nvmlFailed(name, "nvmlDeviceGetApplicationsClock", ret)
		}
		if most[k], ret = d.GetMaxClockInfo(c); ret != nvml.SUCCESS {
			return nvmlFailed(name, "nvmlDeviceGetMaxClockInfo", ret)
		}
	}
	f := Finding{Name: name, Source: source, Status: OK,
		State: fmt.Sprintf("SM %d of max %d MHz, memory %d of max %d MHz", app[0], most[0], app[1], most[1])}
	if app[0] < most[0] || app[1] < most[1] {
		f.Status = Warn
		f.State += ": the GPU runs below what it can"
		f.Advice = fmt.Sprintf("sudo nvidia-smi -i %d -ac %d,%d (memory,SM MHz; nvidia-smi -i %d -q -d SUPPORTED_CLOCKS lists the pairs it takes)",
			i, most[1], most[0], i)
	}
	return f
}

// clockReasonsFunc returns the NVML call that reads a device's current
// clock event reasons: nvmlDeviceGetCurrentClocksEventReasons where the
// driver has it (R535 and later), else its older name
// nvmlDeviceGetCurrentClocksThrottleReasons. Calling a function the
// loaded library lacks kills the process, so each is looked up first;
// when neither is there it returns why. (runner/execute's telemetry
// does the same.)
func clockReasonsFunc(lib nvml.Interface) clockReasonsCall {
	ext := lib.Extensions()
	if ext.LookupSymbol("nvmlDeviceGetCurrentClocksEventReasons") == nil {
		return clockReasonsCall{read: nvml.Device.GetCurrentClocksEventReasons, name: "nvmlDeviceGetCurrentClocksEventReasons"}
	}
	if ext.LookupSymbol("nvmlDeviceGetCurrentClocksThrottleReasons") == nil {
		return clockReasonsCall{read: nvml.Device.GetCurrentClocksThrottleReasons, name: "nvmlDeviceGetCurrentClocksThrottleReasons"}
	}
	return clockReasonsCall{missing: "the driver library has neither nvmlDeviceGetCurrentClocksEventReasons nor " +
		"nvmlDeviceGetCurrentClocksThrottleReasons (update the NVIDIA driver)"}
}

// A clockReasonsCall is the NVML call that reads clock event reasons, or
// why there is none.
type clockReasonsCall struct {
	read    func(nvml.Device) (uint64, nvml.Return)
	name    string
	missing string
}

// clockReasonNames names NVML's clock event reasons as runner/execute's
// documentation does.
var clockReasonNames = []struct {
	bit  uint64
	name string
}{
	{nvml.ClocksEventReasonGpuIdle, "GPU idle"},
	{nvml.ClocksEventReasonApplicationsClocksSetting, "applications clocks setting"},
	{nvml.ClocksEventReasonSwPowerCap, "SW power cap"},
	{nvml.ClocksThrottleReasonHwSlowdown, "HW slowdown"},
	{nvml.ClocksEventReasonSyncBoost, "sync boost"},
	{nvml.ClocksEventReasonSwThermalSlowdown, "SW thermal slowdown"},
	{nvml.ClocksThrottleReasonHwThermalSlowdown, "HW thermal slowdown"},
	{nvml.ClocksThrottleReasonHwPowerBrakeSlowdown, "HW power brake"},
	{nvml.ClocksEventReasonDisplayClockSetting, "display clock setting"},
	{nvml.ClocksEventReasonBoardLimit, "board limit"},
	{nvml.ClocksEventReasonReliability, "reliability"},
}

// throttleReasons are the reasons that count as throttling: all but GPU
// idle and applications clocks setting, which are the driver or an
// administrator choosing a clock rather than a limit pulling it down (as
// in runner/execute's gpu-throttled-fraction).
const throttleReasons = ^uint64(nvml.ClocksEventReasonGpuIdle | nvml.ClocksEventReasonApplicationsClocksSetting)

// describeReasons names the reasons set in mask, with their bits.
func describeReasons(mask uint64) []string {
	var names []string
	left := mask
	for _, r := range clockReasonNames {
		if mask&r.bit != 0 {
			names = append(names, fmt.Sprintf("%s (%#x)", r.name, r.bit))
			left &^= r.bit
		}
	}
	if left != 0 {
		names = append(names, fmt.Sprintf("reason %#x", left))
	}
	return names
}

// clockReasons reads why the clocks are what they are right now: any
// throttling reason is a warning. It is one reading of a GPU that is
// probably idle, so a limit that only bites under load does not show.
func clockReasons(i int, d nvml.Device, call clockReasonsCall) Finding {
	const name = "clock-reasons"
	if call.read == nil {
		return Finding{Name: name, Status: Unknown, Source: "nvml", State: "nvml: " + call.missing}
	}
	mask, ret := call.read(d)
	if ret != nvml.SUCCESS {
		return nvmlFailed(name, call.name, ret)
	}
	f := Finding{Name: name, Source: "nvml: " + call.name, Status: OK}
	switch {
	case mask == 0:
		f.State = "none"
	case mask&throttleReasons == 0:
		f.State = strings.Join(describeReasons(mask), ", ") + ": not throttling"
	default:
		f.Status = Warn
		f.State = "throttling now: " + strings.Join(describeReasons(mask), ", ")
		f.Advice = fmt.Sprintf("see nvidia-smi -i %d -q -d PERFORMANCE,TEMPERATURE,POWER: for thermal or HW slowdown check cooling and power delivery; "+
			"for SW power cap raise the limit with sudo nvidia-smi -i %d -pl WATTS", i, i)
	}
	return f
}

// ecc reads the ECC mode. On or off is information (it costs some memory
// bandwidth; what matters is that it is the same for every run); a
// pending change, which takes effect at the next reset, is a warning.
func ecc(i int, d nvml.Device) Finding {
	const name, call = "ecc", "nvmlDeviceGetEccMode"
	cur, pending, ret := d.GetEccMode()
	if ret != nvml.SUCCESS {
		return nvmlFailed(name, call, ret)
	}
	onOff := func(s nvml.EnableState) string {
		if s == nvml.FEATURE_ENABLED {
			return "on"
		}
		return "off"
	}
	f := Finding{Name: name, Source: "nvml: " + call, Status: Info, State: onOff(cur)}
	if pending != cur {
		keep := 0
		if cur == nvml.FEATURE_ENABLED {
			keep = 1
		}
		f.Status = Warn
		f.State = fmt.Sprintf("%s now, %s after the next GPU reset or reboot: runs before and after will differ", onOff(cur), onOff(pending))
		f.Advice = fmt.Sprintf("reset the GPU before benchmarking (sudo nvidia-smi -i %d -r, or reboot), or cancel the change with sudo nvidia-smi -i %d -e %d",
			i, i, keep)
	}
	return f
}

// gpuProcesses lists the processes using the GPU (compute and graphics)
// other than perfbot's own: any is a warning.
func gpuProcesses(d nvml.Device, f fsys, ours func(int) bool) Finding {
	const name = "gpu-processes"
	const source = "nvml: nvmlDeviceGetComputeRunningProcesses, nvmlDeviceGetGraphicsRunningProcesses"
	compute, retc := d.GetComputeRunningProcesses()
	graphics, retg := d.GetGraphicsRunningProcesses()
	switch {
	case retc == nvml.ERROR_NOT_SUPPORTED && retg == nvml.ERROR_NOT_SUPPORTED:
		return nvmlFailed(name, "nvmlDeviceGetComputeRunningProcesses", retc)
	case retc != nvml.SUCCESS && retc != nvml.ERROR_NOT_SUPPORTED:
		return nvmlFailed(name, "nvmlDeviceGetComputeRunningProcesses", retc)
	case retg != nvml.SUCCESS && retg != nvml.ERROR_NOT_SUPPORTED:
		return nvmlFailed(name, "nvmlDeviceGetGraphicsRunningProcesses", retg)
	}
	mem := map[uint32]uint64{}
	var pids []uint32
	for _, p := range append(compute, graphics...) {
		if _, seen := mem[p.Pid]; !seen {
			pids = append(pids, p.Pid)
			mem[p.Pid] = p.UsedGpuMemory
		} else if p.UsedGpuMemory != math.MaxUint64 {
			mem[p.Pid] = max(mem[p.Pid], p.UsedGpuMemory) // in both lists: the same memory
		}
	}
	slices.Sort(pids)
	var others []string
	for _, pid := range pids {
		if ours(int(pid)) {
			continue
		}
		s := fmt.Sprintf("%d", pid)
		if comm, err := f.read(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && comm != "" {
			s += " " + comm
		}
		if m := mem[pid]; m != math.MaxUint64 { // NVML_VALUE_NOT_AVAILABLE
			s += fmt.Sprintf(" (%.1f GiB)", float64(m)/(1<<30))
		}
		others = append(others, s)
	}
	res := Finding{Name: name, Source: source, Status: OK, State: "none"}
	if len(others) > 0 {
		res.Status = Warn
		res.State = "in use by " + strings.Join(others, ", ")
		res.Advice = "stop them before benchmarking: they share the GPU's SMs, memory bandwidth and power budget with the benchmark"
	}
	return res
}

// NVMLReason names an NVML return code as nvml.h spells it and, for the
// codes that mean "no driver here", says so; runner/execute names them the
// same way.
func NVMLReason(ret nvml.Return) string {
	s := NVMLName(ret)
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		s += " (no NVIDIA driver library libnvidia-ml.so.1 on this machine)"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		s += " (the NVIDIA kernel driver is not loaded)"
	case nvml.ERROR_NO_PERMISSION:
		s += " (no permission to the GPU devices)"
	}
	return s
}

// nvmlCodes name NVML's return codes as nvml.h spells them.
var nvmlCodes = map[nvml.Return]string{
	nvml.SUCCESS: "SUCCESS", nvml.ERROR_UNINITIALIZED: "ERROR_UNINITIALIZED",
	nvml.ERROR_INVALID_ARGUMENT: "ERROR_INVALID_ARGUMENT", nvml.ERROR_NOT_SUPPORTED: "ERROR_NOT_SUPPORTED",
	nvml.ERROR_NO_PERMISSION: "ERROR_NO_PERMISSION", nvml.ERROR_ALREADY_INITIALIZED: "ERROR_ALREADY_INITIALIZED",
	nvml.ERROR_NOT_FOUND: "ERROR_NOT_FOUND", nvml.ERROR_INSUFFICIENT_SIZE: "ERROR_INSUFFICIENT_SIZE",
	nvml.ERROR_INSUFFICIENT_POWER: "ERROR_INSUFFICIENT_POWER", nvml.ERROR_DRIVER_NOT_LOADED: "ERROR_DRIVER_NOT_LOADED",
	nvml.ERROR_TIMEOUT: "ERROR_TIMEOUT", nvml.ERROR_IRQ_ISSUE: "ERROR_IRQ_ISSUE",
	nvml.ERROR_LIBRARY_NOT_FOUND: "ERROR_LIBRARY_NOT_FOUND", nvml.ERROR_FUNCTION_NOT_FOUND: "ERROR_FUNCTION_NOT_FOUND",
	nvml.ERROR_CORRUPTED_INFOROM: "ERROR_CORRUPTED_INFOROM", nvml.ERROR_GPU_IS_LOST: "ERROR_GPU_IS_LOST",
	nvml.ERROR_RESET_REQUIRED: "ERROR_RESET_REQUIRED", nvml.ERROR_OPERATING_SYSTEM: "ERROR_OPERATING_SYSTEM",
	nvml.ERROR_LIB_RM_VERSION_MISMATCH: "ERROR_LIB_RM_VERSION_MISMATCH", nvml.ERROR_IN_USE: "ERROR_IN_USE",
	nvml.ERROR_MEMORY: "ERROR_MEMORY", nvml.ERROR_NO_DATA: "ERROR_NO_DATA",
	nvml.ERROR_VGPU_ECC_NOT_SUPPORTED: "ERROR_VGPU_ECC_NOT_SUPPORTED", nvml.ERROR_INSUFFICIENT_RESOURCES: "ERROR_INSUFFICIENT_RESOURCES",
	nvml.ERROR_FREQ_NOT_SUPPORTED: "ERROR_FREQ_NOT_SUPPORTED", nvml.ERROR_ARGUMENT_VERSION_MISMATCH: "ERROR_ARGUMENT_VERSION_MISMATCH",
	nvml.ERROR_DEPRECATED: "ERROR_DEPRECATED", nvml.ERROR_NOT_READY: "ERROR_NOT_READY",
	nvml.ERROR_GPU_NOT_FOUND: "ERROR_GPU_NOT_FOUND", nvml.ERROR_INVALID_STATE: "ERROR_INVALID_STATE",
	nvml.ERROR_RESET_TYPE_NOT_SUPPORTED: "ERROR_RESET_TYPE_NOT_SUPPORTED", nvml.ERROR_UNKNOWN: "ERROR_UNKNOWN",
}

// NVMLName returns the name of an NVML return code. Not Return.Error:
// that is the driver library's text ("Not Supported") once any Init in
// the process has loaded libnvidia-ml, even an Init that then failed (a
// machine with the library but no kernel driver), and go-nvml's own table
// of names before, so the same code would read two ways.
func NVMLName(ret nvml.Return) string {
	if name, ok := nvmlCodes[ret]; ok {
		return name
	}
	return ret.Error()
}
