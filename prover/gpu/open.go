package gpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ABIVersion is the version of cuda/perfbot_cuda.h this package speaks
// (PERFBOT_CUDA_ABI_VERSION); a library of another version is refused.
const ABIVersion = 2

// LibName is the library's file name.
const LibName = "libperfbot_cuda.so"

// EnvLib names the environment variable that points at the library.
const EnvLib = "PERFBOT_CUDA_LIB"

// EnvG2 names the environment variable that says where an Engine runs
// the G2 MSM: gpu (the default: on the device, in its turn between the G1
// MSMs) or host (gnark-crypto on the host's cores, beside the device's G1
// MSMs). On the H100 a whole 2^24 proof took 1.46–2.00 s with gpu against
// 2.32–2.85 s with host (cuda/NOTES.md v7). Engine.SetG2OnDevice
// overrides it.
const EnvG2 = "PERFBOT_G2"

// g2FromEnv reads EnvG2: whether the G2 MSM runs on the device.
func g2FromEnv() (bool, error) {
	switch v := os.Getenv(EnvG2); strings.ToLower(v) {
	case "host", "cpu":
		return false, nil
	case "", "gpu", "device":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%s: want gpu or host (or unset for gpu)", EnvG2, v)
	}
}

// ErrNoLibrary means no library was found where it is looked for;
// ErrNoDevice that it loaded but no CUDA device answered.
var (
	ErrNoLibrary = errors.New("the CUDA library is not found")
	ErrNoDevice  = errors.New("no CUDA device")
)

// A Device is one CUDA device as the library reports it.
type Device struct {
	Index           int
	Name            string
	UUID            string
	Major, Minor    int // compute capability
	Multiprocessors int
	DriverVersion   int // CUDA version the driver supports, e.g. 13000
	RuntimeVersion  int // CUDA runtime the library was built with
	Memory          uint64
}

// An Error is a failure reported by the library, with its code
// (PERFBOT_CUDA_ERR_*) and message.
type Error struct {
	Code    int
	Op      string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("cuda %s: %s (code %d)", e.Op, e.Message, e.Code)
}

// codeMemory is the Error code for device or pinned host memory running
// out (PERFBOT_CUDA_ERR_MEMORY).
const codeMemory = 4

// isOutOfMemory reports whether err is the library's out-of-memory error.
func isOutOfMemory(err error) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.Code == codeMemory
}

// A Step is the time of one device step (a kernel or a copy), summed over
// the calls since the engine's last TakeSteps.
type Step struct {
	Name    string
	Seconds float64
}

// Candidates returns where Open looks for the library, in order.
func Candidates(explicit string) []string {
	if explicit != "" {
		return []string{explicit}
	}
	var out []string
	if p := os.Getenv(EnvLib); p != "" {
		out = append(out, p)
	}
	if exe, err := os.Executable(); err == nil {
		out = append(out, filepath.Join(filepath.Dir(exe), LibName))
	}
	return out
}

// Open loads the library from the first candidate that exists (see
// Candidates). A candidate that exists but fails to load is an error, not
// skipped: a broken library must be noticed.
func Open(explicit string) (*Library, error) {
	if !Available {
		return nil, fmt.Errorf("%w: this perfbot was built without cgo (CGO_ENABLED=0), so it cannot load %s; rebuild with cgo", ErrNoLibrary, LibName)
	}
	cands := Candidates(explicit)
	for _, p := range cands {
		if _, err := os.Stat(p); err != nil {
			if explicit != "" {
				return nil, fmt.Errorf("%w at %s: %v; build it with `make cuda` on a machine with nvcc", ErrNoLibrary, p, err)
			}
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		return load(abs)
	}
	return nil, fmt.Errorf("%w: looked in %s; build it with `make cuda` and point --cuda-lib or %s at it", ErrNoLibrary, strings.Join(cands, ", "), EnvLib)
}
