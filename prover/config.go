package prover

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"runtime"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// MaxConstraints is the largest circuit perfbot prove builds: 2^28.
const MaxConstraints = 1 << 28

// Backends are the values --backend accepts.
var Backends = []string{"cpu", "gpu", "auto"}

// SRSModes are the values --srs accepts.
var SRSModes = []string{"setup", "random"}

// Circuits are the workload circuits perfbot prove knows.
var Circuits = []string{"sha256"}

// LCStorages are the values --lc-storage accepts (see r1cs.LCStorage):
// heap, the default, and inline.
var LCStorages = r1cs.LCStorages

// A Config says what perfbot prove runs.
type Config struct {
	Circuit     string // one of Circuits
	Constraints int    // requested size; rounded up to whole circuit blocks
	Backend     string // one of Backends
	Phases      string // one of PhaseSets
	SRS         string // one of SRSModes
	Count       int    // measured proofs
	Warmup      int    // proofs run first and not reported
	Seed        int64  // witness and toxic-waste seed
	Verify      bool   // verify every measured proof; an invalid one is an error
	KeyDir      string // cache directory for keys; "" disables the cache
	CUDALib     string // libperfbot_cuda.so for the GPU backend; "" searches (see prover/gpu)
	// LCStorage is where synthesis keeps the terms of its linear
	// combinations: one of LCStorages, "" meaning heap. A variant switch:
	// the proof is the same, the synthesis time is not.
	LCStorage string
	// Counters is whether each phase carries perf counters: one of
	// CounterModes, "" meaning auto (see counterSet).
	Counters string
	// Threads is how many goroutines synthesis runs on: 1 is the
	// sequential synthesis, more split the chain's blocks among them
	// (circuit.SHA256Chain.SynthesizeParallel), with the same witness and
	// proof; 0 means runtime.GOMAXPROCS(0), all the CPUs the process may
	// use.
	Threads int
	// Pipeline proves the Count measured proofs in a pipeline: the
	// synthesis of proof n+1 runs while proof n is proved (see
	// pipeline.go). It needs Count ≥ 2 and Phases "all".
	Pipeline bool

	Logger *slog.Logger // progress and warnings; nil discards them
}

// Validate checks c and returns an error naming the bad field and the
// allowed values.
func (c *Config) Validate() error {
	if err := oneOf("circuit", c.Circuit, Circuits); err != nil {
		return err
	}
	if c.Constraints <= 0 || c.Constraints > MaxConstraints {
		return fmt.Errorf("constraints %d out of range: give a count from 1 to 2^28 (268435456)", c.Constraints)
	}
	if err := oneOf("backend", c.Backend, Backends); err != nil {
		return err
	}
	if _, err := ParsePhaseSet(c.Phases); err != nil {
		return err
	}
	if err := oneOf("srs", c.SRS, SRSModes); err != nil {
		return err
	}
	if c.LCStorage != "" {
		if err := oneOf("lc-storage", c.LCStorage, LCStorages); err != nil {
			return err
		}
	}
	if c.Counters != "" {
		if err := oneOf("counters", c.Counters, CounterModes); err != nil {
			return err
		}
	}
	if c.Threads < 0 {
		return fmt.Errorf("threads %d: give 1 or more synthesis goroutines (1 is the sequential synthesis), or 0 for all CPUs", c.Threads)
	}
	if c.Count < 1 {
		return fmt.Errorf("count %d: give at least 1 proof to measure", c.Count)
	}
	if c.Warmup < 0 {
		return fmt.Errorf("warmup %d: give 0 or more warm-up proofs", c.Warmup)
	}
	if c.Pipeline && c.Count < 2 {
		return fmt.Errorf("--pipeline with count %d: a pipeline needs at least 2 proofs (the synthesis of one overlaps the proving of the one before); give --count 2 or more", c.Count)
	}
	if c.Pipeline && c.Phases == PhaseSynthesis {
		return errors.New("--pipeline with --phases synthesis: with synthesis alone there is nothing for it to overlap; use --phases all or drop --pipeline")
	}
	if c.Verify && c.SRS == "random" {
		return errors.New("--verify with --srs random: proofs made with random keys cannot verify; use --srs setup")
	}
	return nil
}

// threads returns the number of synthesis goroutines c.Threads asks for.
func (c *Config) threads() int {
	if c.Threads == 0 {
		return runtime.GOMAXPROCS(0)
	}
	return c.Threads
}

// lcStorage returns the storage c.LCStorage names; Validate has checked it.
func (c *Config) lcStorage() r1cs.LCStorage {
	s, _ := r1cs.ParseLCStorage(cmp.Or(c.LCStorage, LCStorages[0]))
	return s
}

func oneOf(what, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("unknown %s %q: allowed values are %s", what, v, strings.Join(allowed, ", "))
}

// ParseConstraints parses a constraint count written as a decimal number
// ("65536") or a power of two ("2^16"). It accepts 1 to 2^28.
func ParseConstraints(s string) (int, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) error {
		return fmt.Errorf("constraints %q: %s; give a count such as 65536 or 2^16, at most 2^28", s, why)
	}
	var n uint64
	if base, exp, ok := strings.Cut(s, "^"); ok {
		if base != "2" {
			return 0, bad("only powers of two may be written with ^")
		}
		e, err := strconv.ParseUint(exp, 10, 8)
		if err != nil {
			return 0, bad("the exponent is not a small whole number")
		}
		if e > 28 {
			return 0, bad("too large")
		}
		n = 1 << e
	} else {
		v, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange):
			return 0, bad("too large")
		case err != nil:
			return 0, bad("not a number")
		case v <= 0:
			return 0, bad("must be positive")
		}
		n = uint64(v)
	}
	if n > MaxConstraints {
		return 0, bad("too large")
	}
	return int(n), nil
}

// FormatConstraints writes n as 2^k when it is a power of two.
func FormatConstraints(n int) string {
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", bits.TrailingZeros(uint(n)))
	}
	return strconv.Itoa(n)
}
