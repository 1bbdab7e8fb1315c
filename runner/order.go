package runner

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The orders in which a round runs the sides (.perfbot.yml order:).
const (
	// OrderRandom runs the sides of each round in a random order, drawn
	// from a seeded generator: no position effect (the first process of
	// a round warming a cache, a boost clock, the page cache) and no
	// periodic interference can land on one side only. The default.
	OrderRandom = "random"
	// OrderABBA alternates base-head and head-base rounds: balanced
	// exactly over every two rounds, but in step with interference of
	// period four.
	OrderABBA = "abba"
	// OrderAlternate runs base then head in every round, as perfbot did
	// before: kept to measure the other orders against.
	OrderAlternate = "alternate"
)

// Orders lists the orders, the default first.
var Orders = []string{OrderRandom, OrderABBA, OrderAlternate}

// NewSeed returns a seed for a random order: a number from 1 to 2^63−1,
// from the operating system's generator.
func NewSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("runner: read random seed: %v", err)) // crypto/rand does not fail on Linux
	}
	return binary.LittleEndian.Uint64(b[:])>>1 | 1
}

// ParseSeed parses a seed as the CLI takes it: a whole number from 1 to
// 2^63−1, as a report prints it.
func ParseSeed(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || v == 0 || v > 1<<63-1 {
		return 0, fmt.Errorf("%q is not a seed: want a whole number from 1 to %d, as a report prints it (\"seed 12345\")", s, uint64(1<<63-1))
	}
	return v, nil
}

// A scheduler orders the sides of each round. It is deterministic given
// its order and seed, so a comparison's --seed replays its order.
type scheduler struct {
	order string
	seed  uint64
	rng   *mrand.Rand
	// rounds counts the rounds ordered so far per benchmark: abba's
	// position.
	rounds map[string]int
	// log records the side of every run of the rounds ordered, in the
	// order they ran (warm-ups included, marked by a trailing "~").
	log []string
}

func newScheduler(order string, seed uint64) *scheduler {
	if order == "" {
		order = OrderRandom
	}
	return &scheduler{order: order, seed: seed, rng: mrand.New(mrand.NewPCG(seed, seed^0x5deece66d)), rounds: map[string]int{}}
}

// next returns the order of the sides in benchmark's next round: a copy
// of sides, reordered. Each benchmark of a round is ordered on its own,
// so abba balances every benchmark.
func (s *scheduler) next(benchmark string, sides []*side) []*side {
	out := slices.Clone(sides)
	switch s.order {
	case OrderRandom:
		s.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	case OrderABBA:
		if s.rounds[benchmark]%2 == 1 {
			slices.Reverse(out)
		}
	}
	s.rounds[benchmark]++
	return out
}

// record notes that a run of side ran.
func (s *scheduler) record(name string, keep bool) {
	if !keep {
		name += "~"
	}
	s.log = append(s.log, name)
}

// schedule returns the sides of the measured runs in the order they ran.
func (s *scheduler) schedule() []string {
	var out []string
	for _, n := range s.log {
		if !strings.HasSuffix(n, "~") {
			out = append(out, n)
		}
	}
	return out
}
