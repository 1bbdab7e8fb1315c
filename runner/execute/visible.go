package execute

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// EnvVisibleDevices and EnvDeviceOrder are CUDA's device selection. A
// worker per GPU runs with CUDA_VISIBLE_DEVICES=N (deploy/systemd); its
// benchmarks inherit both, and the fingerprint and the GPU telemetry
// cover only the devices they name.
const (
	EnvVisibleDevices = "CUDA_VISIBLE_DEVICES"
	EnvDeviceOrder    = "CUDA_DEVICE_ORDER"
)

// visibility is the CUDA_VISIBLE_DEVICES perfbot runs with.
type visibility struct {
	value string
	set   bool
}

// visibilityFromEnv reads it from perfbot's environment.
func visibilityFromEnv() visibility {
	v, ok := os.LookupEnv(EnvVisibleDevices)
	return visibility{value: v, set: ok}
}

// byUUID reports whether v names a device otherwise than by its index.
func (v visibility) byUUID() bool {
	if !v.set {
		return false
	}
	for _, entry := range strings.Split(v.value, ",") {
		if _, err := strconv.Atoi(strings.TrimSpace(entry)); err != nil && strings.TrimSpace(entry) != "" {
			return true
		}
	}
	return false
}

// pick returns the NVML indices (0 … n-1) of the devices a CUDA program
// sees, in its order, given each device's UUID. Unset, that is every
// device. Set, it is CUDA's rule: a comma-separated list of indices or
// UUIDs (a unique prefix such as GPU-8f2e is enough), read up to the
// first entry that names no device; an empty value hides them all. note
// says why devices were dropped, for Env.Unavailable.
//
// NVML numbers devices in PCI bus order; CUDA does too only with
// CUDA_DEVICE_ORDER=PCI_BUS_ID (its default puts the fastest first), so
// an index means the same device to both only then. The systemd unit
// sets it; on a host of identical GPUs the two orders agree anyway.
func (v visibility) pick(uuids []string) (idx []int, note string) {
	n := len(uuids)
	if !v.set {
		idx = make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx, ""
	}
	if strings.TrimSpace(v.value) == "" {
		return nil, EnvVisibleDevices + " is empty: no GPU is visible to the benchmarks"
	}
	seen := map[int]bool{}
	for _, entry := range strings.Split(v.value, ",") {
		entry = strings.TrimSpace(entry)
		i, why := lookupDevice(entry, uuids)
		if why == "" && seen[i] {
			why = "it names a device already listed"
		}
		if why != "" {
			return idx, fmt.Sprintf("%s=%q: %q %s, so it and the entries after it are ignored (as CUDA does)",
				EnvVisibleDevices, v.value, entry, why)
		}
		seen[i] = true
		idx = append(idx, i)
	}
	return idx, ""
}

// lookupDevice finds the device an entry of CUDA_VISIBLE_DEVICES names.
func lookupDevice(entry string, uuids []string) (int, string) {
	if i, err := strconv.Atoi(entry); err == nil {
		if i < 0 || i >= len(uuids) {
			return 0, fmt.Sprintf("is not a device index (NVML reports %d)", len(uuids))
		}
		return i, ""
	}
	if !strings.HasPrefix(entry, "GPU-") {
		// MIG-… instances and anything else: not a whole GPU NVML lists.
		return 0, "is neither a device index nor a GPU UUID (GPU-…)"
	}
	found := -1
	for i, u := range uuids {
		if u != "" && strings.HasPrefix(u, entry) {
			if found >= 0 {
				return 0, "is the start of more than one GPU's UUID"
			}
			found = i
		}
	}
	if found < 0 {
		return 0, "is no GPU's UUID"
	}
	return found, ""
}
