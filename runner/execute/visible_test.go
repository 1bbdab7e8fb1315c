package execute

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"

	"github.com/perfbot/perfbot/analysis"
)

func TestVisibilityPicksTheDevicesCUDAWouldSee(t *testing.T) {
	t.Parallel()
	uuids := []string{"GPU-8f2e0001-aaaa", "GPU-8f2e0002-bbbb", "GPU-c0de0003-cccc", ""}
	for _, c := range []struct {
		value string
		set   bool
		want  []int
		note  string // a part of the note; "" for none
	}{
		{"", false, []int{0, 1, 2, 3}, ""},
		{"1", true, []int{1}, ""},
		{"2,0", true, []int{2, 0}, ""},
		{" 3 , 1 ", true, []int{3, 1}, ""},
		{"GPU-c0de", true, []int{2}, ""},
		{"GPU-8f2e0002-bbbb,0", true, []int{1, 0}, ""},
		{"", true, nil, "is empty: no GPU is visible"},
		{"1,7,0", true, []int{1}, `"7" is not a device index (NVML reports 4)`},
		{"0,0", true, []int{0}, `"0" it names a device already listed`},
		{"GPU-8f2e", true, nil, "more than one GPU's UUID"},
		{"GPU-ffff", true, nil, "is no GPU's UUID"},
		{"MIG-1234", true, nil, "neither a device index nor a GPU UUID"},
		{"-1", true, nil, "is not a device index"},
	} {
		got, note := visibility{c.value, c.set}.pick(uuids)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q (set %v): devices %v, want %v", c.value, c.set, got, c.want)
		}
		if (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
			t.Errorf("%q (set %v): note %q, want one with %q", c.value, c.set, note, c.note)
		}
	}
}

func TestFingerprintNamesTheVisibleGPUsOfATwoGPUHost(t *testing.T) {
	t.Parallel()
	// NVML on a host of two H200s (the mock draws their UUIDs once).
	host := dgxh200.NewWithGPUs(gpus.Multiple(2, gpus.H200_SXM5_141GB)...)
	twoGPUs := func() nvml.Interface { return host }
	all := fingerprint(context.Background(), twoGPUs(), visibility{})
	if all.GPUCount != 2 || len(all.GPUs) != 2 || all.GPUs[0].UUID == all.GPUs[1].UUID || all.CUDAVisibleDevices != "" {
		t.Fatalf("unset: %d GPUs %+v (visible %q); want both, apart", all.GPUCount, all.GPUs, all.CUDAVisibleDevices)
	}
	// One worker per GPU: each fingerprints its own device, so the two
	// workers' runs are two machines' series, never mixed.
	ids := map[string]bool{all.ID(): true}
	for i, g := range all.GPUs {
		for _, value := range []string{string(rune('0' + i)), g.UUID[:12]} {
			e := fingerprint(context.Background(), twoGPUs(), visibility{value, true})
			if e.GPUCount != 1 || len(e.GPUs) != 1 || e.GPUs[0] != g {
				t.Errorf("CUDA_VISIBLE_DEVICES=%s: GPUs %+v, want only %+v", value, e.GPUs, g)
			}
			if e.CUDAVisibleDevices != value || len(e.Unavailable) > 0 && e.Unavailable["cuda_visible_devices"] != "" {
				t.Errorf("CUDA_VISIBLE_DEVICES=%s: recorded %q, unavailable %v", value, e.CUDAVisibleDevices, e.Unavailable)
			}
			ids[e.ID()] = true
		}
	}
	if len(ids) != 3 {
		t.Errorf("%d distinct machine IDs for both GPUs, GPU 0 and GPU 1 (each named two ways); want 3", len(ids))
	}
	e := fingerprint(context.Background(), twoGPUs(), visibility{"1,2", true})
	if len(e.GPUs) != 1 || e.GPUs[0].Index != 1 || !strings.Contains(e.Unavailable["cuda_visible_devices"], `"2" is not a device index (NVML reports 2)`) {
		t.Errorf("CUDA_VISIBLE_DEVICES=1,2: GPUs %+v, unavailable %v", e.GPUs, e.Unavailable)
	}
}

func TestRunSamplesOnlyTheVisibleGPU(t *testing.T) {
	// t.Setenv: perfbot reads its own CUDA_VISIBLE_DEVICES, as a worker
	// started by perfbot-worker@1.service does.
	t.Setenv(EnvVisibleDevices, "1")
	t.Setenv(EnvDeviceOrder, "PCI_BUS_ID")
	a, b := steadyGPU(), steadyGPU()
	b.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 400_000, nvml.SUCCESS }
	var touched []int
	lib := nvmlWith([]*mock.Device{a, b})
	handle := lib.DeviceGetHandleByIndexFunc
	lib.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		touched = append(touched, i)
		return handle(i)
	}
	res := runHelperNVML(t, "nap", Spec{Name: "prove", TelemetryInterval: 20 * time.Millisecond}, lib)
	wantStatus(t, res, analysis.StatusOK)
	// One device: its samples carry no /gpu= suffix, like a one-GPU host's.
	got := gpuSamples(t, res, "process/benchmark=prove")
	if got["gpu-power-mean-W/run"] != 400 {
		t.Errorf("power %v W, want GPU 1's 400 (samples %v)", got["gpu-power-mean-W/run"], got)
	}
	for _, s := range res.Run.Samples {
		if strings.Contains(s.Benchmark, "/gpu=") {
			t.Errorf("a sample of another GPU: %s %s", s.Benchmark, s.Unit)
		}
	}
	if slices.Contains(touched, 0) {
		t.Errorf("NVML asked for GPU 0's handle (%v): another worker's device", touched)
	}
	if len(a.GetPowerUsageCalls()) != 0 {
		t.Errorf("GPU 0 read %d times", len(a.GetPowerUsageCalls()))
	}
	waitShutdown(t, lib)

	env := runHelper(t, "env", Spec{})
	if env.Config["visible"] != "1" || env.Config["order"] != "PCI_BUS_ID" {
		t.Errorf("the benchmark sees CUDA_VISIBLE_DEVICES=%q CUDA_DEVICE_ORDER=%q; want perfbot's 1 and PCI_BUS_ID",
			env.Config["visible"], env.Config["order"])
	}
}
