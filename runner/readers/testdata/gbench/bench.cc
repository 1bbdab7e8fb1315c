// bench.cc is the Google Benchmark program of the gbench reader's tests
// (gbench_test.go builds it). Each benchmark runs a fixed number of
// xorshift steps an iteration; PERFBOT_SLOW=NAME doubles the steps of
// benchmark function NAME, to plant a slowdown.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

static int64_t factor(const char* fn) {
  const char* slow = std::getenv("PERFBOT_SLOW");
  return slow != nullptr && std::strcmp(slow, fn) == 0 ? 2 : 1;
}

static void spin(benchmark::State& state, const char* fn, int64_t n) {
  n *= factor(fn);
  uint64_t x = 88172645463325252ull;
  for (auto _ : state) {
    for (int64_t i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    benchmark::DoNotOptimize(x);
  }
  state.counters["steps"] = static_cast<double>(n);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 8);
}

static void BM_Hash(benchmark::State& state) { spin(state, "BM_Hash", state.range(0)); }
BENCHMARK(BM_Hash)->Arg(1000)->Arg(4000)->Unit(benchmark::kMicrosecond);

static void BM_Mix(benchmark::State& state) { spin(state, "BM_Mix", state.range(0) * state.range(1)); }
BENCHMARK(BM_Mix)->ArgNames({"n", "k"})->Args({1000, 3});

static void BM_Plain(benchmark::State& state) { spin(state, "BM_Plain", 2000); }
BENCHMARK(BM_Plain);

BENCHMARK_MAIN();
