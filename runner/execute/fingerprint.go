package execute

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/runner/system"
)

// An Env describes the machine and software a run happened on. Fields
// that could not be read are zero and Unavailable says why.
type Env struct {
	Hostname string `json:"hostname"`
	// CPUModel is /proc/cpuinfo's "model name".
	CPUModel string `json:"cpu_model"`
	// CPUs counts the logical CPUs in /proc/cpuinfo; NumCPU is how many
	// of them perfbot may use (runtime.NumCPU, which honours affinity).
	CPUs   int `json:"cpus"`
	NumCPU int `json:"num_cpu"`
	// Kernel is the kernel release (uname -r).
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"` // perfbot's, runtime.Version
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	// MemTotal is the machine's RAM in bytes.
	MemTotal uint64 `json:"mem_total_bytes"`
	// PerfEventParanoid is /proc/sys/kernel/perf_event_paranoid: which
	// perf counters an unprivileged process may open.
	PerfEventParanoid int `json:"perf_event_paranoid"`

	// GPU fields come from NVML when it answers.
	GPUDriverVersion  string `json:"gpu_driver_version,omitempty"`
	CUDADriverVersion string `json:"cuda_driver_version,omitempty"` // "12.4"
	// GPUCount and GPUs are the devices the benchmarks see: every one
	// NVML reports, or those CUDAVisibleDevices names (a worker per GPU).
	GPUCount           int    `json:"gpu_count"`
	GPUs               []GPU  `json:"gpus,omitempty"`
	CUDAVisibleDevices string `json:"cuda_visible_devices,omitempty"`

	// Unavailable maps each field or group of fields ("gpu", "cpu_model",
	// …) that could not be read to the reason.
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// A GPU is one device NVML reports.
type GPU struct {
	Index    int    `json:"index"` // NVML's (PCI bus order)
	Name     string `json:"name"`
	UUID     string `json:"uuid"`
	MemTotal uint64 `json:"mem_total_bytes"`
}

// ID returns a short stable hash of the fields that identify the machine:
// host name, CPU model and count, memory (in whole GiB, which survives a
// kernel update that changes what the kernel reserves), OS and
// architecture, and each GPU's name and UUID. Software versions (kernel,
// Go, driver) and settings are left out: they are recorded in Env so that
// a change can be shown, but the machine stays the same machine.
func (e Env) ID() string {
	h := sha256.New()
	fmt.Fprintf(h, "host=%s\ncpu=%s\ncpus=%d\nmem_gib=%d\nplatform=%s/%s\n",
		e.Hostname, e.CPUModel, e.CPUs, (e.MemTotal+1<<29)>>30, e.OS, e.Arch)
	for _, g := range e.GPUs {
		fmt.Fprintf(h, "gpu=%s %s\n", g.Name, g.UUID)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Fingerprint describes the machine it runs on. It never fails: what it
// cannot read is recorded in Env.Unavailable. NVML is asked about GPUs
// only after its Init succeeds (where there is no NVIDIA driver, calling
// anything else kills the process); if ctx ends before NVML answers, the
// GPU fields are left empty.
func Fingerprint(ctx context.Context) Env {
	return fingerprint(ctx, nvml.New(), visibilityFromEnv())
}

// fingerprint is Fingerprint with the NVML library given.
func fingerprint(ctx context.Context, lib nvml.Interface, vis visibility) Env {
	e := Env{
		NumCPU:      runtime.NumCPU(),
		GoVersion:   runtime.Version(),
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		Unavailable: map[string]string{},
	}
	if vis.set {
		e.CUDAVisibleDevices = vis.value
	}
	// NVML can be slow (seconds when a GPU is in a bad state): ask it
	// while reading the rest.
	gpuc := make(chan gpuInfo, 1)
	go func() { gpuc <- readGPUs(lib, vis) }()

	var err error
	if e.Hostname, err = os.Hostname(); err != nil {
		e.Unavailable["hostname"] = err.Error()
	}
	e.CPUModel, e.CPUs, err = readCPUInfo("/proc/cpuinfo")
	if err != nil {
		e.Unavailable["cpu_model"] = err.Error()
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		e.Unavailable["kernel"] = err.Error()
	} else {
		e.Kernel = unix.ByteSliceToString(uts.Release[:])
	}
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		e.Unavailable["mem_total_bytes"] = err.Error()
	} else {
		e.MemTotal = uint64(si.Totalram) * uint64(si.Unit)
	}
	if e.PerfEventParanoid, err = readInt("/proc/sys/kernel/perf_event_paranoid"); err != nil {
		e.Unavailable["perf_event_paranoid"] = err.Error()
	}

	select {
	case g := <-gpuc:
		e.GPUDriverVersion = g.driver
		e.CUDADriverVersion = g.cuda
		e.GPUCount = g.count
		e.GPUs = g.gpus
		for k, v := range g.unavailable {
			e.Unavailable[k] = v
		}
	case <-ctx.Done():
		e.Unavailable["gpu"] = "nvml: " + context.Cause(ctx).Error()
	}
	if len(e.Unavailable) == 0 {
		e.Unavailable = nil
	}
	return e
}

// gpuInfo is what NVML said.
type gpuInfo struct {
	driver, cuda string
	count        int
	gpus         []GPU
	unavailable  map[string]string
}

// readGPUs asks lib about the driver and every device, and keeps the
// devices vis makes visible. It calls nothing but Init unless Init
// succeeds, and then always Shutdown.
func readGPUs(lib nvml.Interface, vis visibility) gpuInfo {
	g := gpuInfo{unavailable: map[string]string{}}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		g.unavailable["gpu"] = "nvml init: " + system.NVMLReason(ret)
		return g
	}
	defer lib.Shutdown()

	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		g.driver = v
	} else {
		g.unavailable["gpu_driver_version"] = "nvml: " + system.NVMLReason(ret)
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		g.cuda = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	} else {
		g.unavailable["cuda_driver_version"] = "nvml: " + system.NVMLReason(ret)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		g.unavailable["gpu"] = "nvml device count: " + system.NVMLReason(ret)
		return g
	}
	all := make([]GPU, 0, n)
	for i := range n {
		key := fmt.Sprintf("gpu[%d]", i)
		gpu := GPU{Index: i}
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			g.unavailable[key] = "nvml device handle: " + system.NVMLReason(ret)
			all = append(all, gpu)
			continue
		}
		var why []string
		if gpu.Name, ret = d.GetName(); ret != nvml.SUCCESS {
			why = append(why, "name: "+system.NVMLReason(ret))
		}
		if gpu.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
			why = append(why, "uuid: "+system.NVMLReason(ret))
		}
		if mem, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			gpu.MemTotal = mem.Total
		} else {
			why = append(why, "memory: "+system.NVMLReason(ret))
		}
		if len(why) > 0 {
			g.unavailable[key] = "nvml " + strings.Join(why, "; ")
		}
		all = append(all, gpu)
	}
	uuids := make([]string, n)
	for i, gpu := range all {
		uuids[i] = gpu.UUID
	}
	idx, note := vis.pick(uuids)
	visible := map[int]bool{}
	for _, i := range idx {
		g.gpus = append(g.gpus, all[i])
		visible[i] = true
	}
	for i := range all {
		if !visible[i] {
			delete(g.unavailable, fmt.Sprintf("gpu[%d]", i)) // not ours
		}
	}
	if note != "" {
		g.unavailable["cuda_visible_devices"] = note
	}
	g.count = len(g.gpus)
	return g
}

// readCPUInfo returns the first "model name" in a /proc/cpuinfo file and
// the number of "processor" entries.
func readCPUInfo(path string) (model string, cpus int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			cpus++
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		}
	}
	if err := s.Err(); err != nil {
		return model, cpus, fmt.Errorf("read %s: %w", path, err)
	}
	if model == "" {
		return "", cpus, fmt.Errorf("%s has no model name", path)
	}
	return model, cpus, nil
}

// readInt reads a file that holds one integer.
func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return n, nil
}
