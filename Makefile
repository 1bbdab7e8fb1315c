# perfbot — build, test, benchmark, lint.
#
#   make build   the perfbot binary in build/
#   make compare the README's main command (HEAD~1 against HEAD)
#   make test    vet and every test (what CI runs)
#   make bench   the Go benchmarks and the prove benchmark script (long)
#   make bench-dashboard  the dashboard's and perfbot trend's figures
#   make lint    gofmt, go vet, staticcheck
#   make cuda    build/libperfbot_cuda.so and its self-test (needs nvcc;
#                CUDA_ARCH=sm_90 by default)
#   make cuda-lib  build/libperfbot_cuda.so alone: what a comparison on a GPU
#                host builds of each revision (deploy/perfbot-gpu.example.yml)
#   make gpu-check  on a GPU host: the CUDA self-test, the GPU Go tests
#                and the critical-path GPU test (Go test binaries from
#                make gpu-tests, carried where the host has no Go)
#   make bench-sppark SPPARK=DIR  build/perfbot_sppark_bench: our G1 MSM and
#                NTT beside sppark's, for BENCHMARKS.md's ratios (DIR:
#                sppark's source tree, blst's in DIR/blst; bench/sppark.sh)

GO        ?= go
BUILD     ?= build
BENCHTIME ?= 3x
BENCHOUT  ?= $(BUILD)/bench

.PHONY: all build compare test test-tools bench bench-tradeoff bench-dashboard bench-sppark fuzz chaos lint fmt clean cuda cuda-lib cuda-host-check gpu-tests gpu-check

NVCC      ?= $(or $(shell command -v nvcc 2>/dev/null),/usr/local/cuda/bin/nvcc)
CUDA_ARCH ?= sm_90
NVFLAGS   ?= -O3 -std=c++17 -arch=$(CUDA_ARCH) -lineinfo
# ref_affine.h and host_inputs.h are the self-test's (and the host checks'
# and the sppark benchmark's) alone: editing them rebuilds those, not the library.
HOST_SRC  := cuda/ref_affine.h cuda/host_inputs.h
CUDA_SRC  := $(filter-out $(HOST_SRC),$(wildcard cuda/*.cuh cuda/*.h))

all: build

build:
	$(GO) build -o $(BUILD)/perfbot ./cmd/perfbot

# The README's main command: compare this repository's last commit with the
# one before it on the embedded SQLite store. perfbot is built first by
# scripts/build-perfbot.sh, which shows the downloads and counts the
# packages it compiles (a first build is minutes of silence otherwise).
# ARGS adds flags: make compare ARGS='--verbose'.
COMPARE_BASE ?= HEAD~1
COMPARE_HEAD ?= HEAD
compare:
	@GO=$(GO) scripts/build-perfbot.sh $(BUILD)/perfbot
	$(BUILD)/perfbot compare --base $(COMPARE_BASE) --head $(COMPARE_HEAD) $(ARGS)

# The store suite runs on SQLite and on PostgreSQL: scripts/with-postgres.sh
# starts a throwaway cluster unless PERFBOT_TEST_DATABASE_URL is set, and
# PERFBOT_REQUIRE_POSTGRES makes a missing server a failure, never a skip.
# PERFBOT_REQUIRE_VALGRIND does the same for the callgrind tests, and
# PERFBOT_REQUIRE_CHROMIUM for the dashboard's headless-Chromium test,
# PERFBOT_REQUIRE_SYSTEMD for systemd-analyze verify of deploy/systemd, and
# PERFBOT_REQUIRE_READER_TOOLS for the readers' real-tool tests (Google
# Benchmark, hyperfine, cargo with Debian's criterion). Last, the test
# build's planted slowdowns (-tags perfbot_test_hooks, bench/gpu-set.sh).
# test-tools checks those tools first and, as root, installs what is
# missing (scripts/test-tools.sh: the one list, which .ci/run uses too).
test: test-tools cuda-host-check
	$(GO) vet ./...
	PERFBOT_REQUIRE_POSTGRES=1 PERFBOT_REQUIRE_VALGRIND=1 PERFBOT_REQUIRE_CHROMIUM=1 PERFBOT_REQUIRE_SYSTEMD=1 PERFBOT_REQUIRE_READER_TOOLS=1 scripts/with-postgres.sh $(GO) test -count=1 -timeout 30m ./...
	$(GO) test -count=1 -tags perfbot_test_hooks -run 'TestTestBuildPlants' ./prover

test-tools:
	scripts/test-tools.sh

# What of the CUDA backend the host can check without a GPU or the CUDA
# toolkit (CI has neither): the NTT kernel's rounds against a plain DFT and
# its shared-memory swizzle against bank conflicts, run by g++ on the very
# code the kernel runs; Fp2 and the G2 formulas (fp2.cuh, curve.cuh) against
# gnark-crypto's values (cuda/gen/testdata, kept equal to gnark-crypto by
# prover/gpu's tests); the self-test's independent MSM reference (the
# affine law of cuda/ref_affine.h) against the same G2 values, G1 values of
# gnark-crypto's, the group order and curve.cuh's formulas; the PTX
# product chains, emulated on integers; and cuda/mont_ptx.cuh being what
# its generator writes.
cuda-host-check:
	@mkdir -p $(BUILD)
	$(CXX) -O2 -std=c++17 -I cuda -o $(BUILD)/check_ntt_rounds cuda/gen/check_ntt_rounds.cpp
	$(BUILD)/check_ntt_rounds > $(BUILD)/check_ntt_rounds.txt || { cat $(BUILD)/check_ntt_rounds.txt; exit 1; }
	@tail -1 $(BUILD)/check_ntt_rounds.txt
	$(CXX) -O2 -std=c++17 -I cuda -o $(BUILD)/check_fp2 cuda/gen/check_fp2.cpp
	$(BUILD)/check_fp2 cuda/gen/testdata/fp2_g2_vectors.txt
	$(CXX) -O2 -std=c++17 -I cuda -o $(BUILD)/check_ref_affine cuda/gen/check_ref_affine.cpp
	$(BUILD)/check_ref_affine cuda/gen/testdata/fp2_g2_vectors.txt
	python3 cuda/gen/mont_ptx.py --check
	python3 cuda/gen/mont_ptx.py | cmp -s - cuda/mont_ptx.cuh || { echo "cuda/mont_ptx.cuh is stale: python3 cuda/gen/mont_ptx.py > cuda/mont_ptx.cuh"; exit 1; }

bench: build
	mkdir -p $(BENCHOUT)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -timeout 60m ./prover/... | tee $(BENCHOUT)/go-bench.txt
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench 'BenchmarkTrend1M$$' -benchtime 20x -timeout 30m ./store/ | tee $(BENCHOUT)/trend1m.txt
	bench/prove.sh $(BUILD)/perfbot $(BENCHOUT)
	$(MAKE) bench-tradeoff

# The dashboard's and perfbot trend's figures (BENCHMARKS.md, History):
# TrendSeries, the index's query, over 1M samples on PostgreSQL and
# SQLite; the front and compare pages over 1M samples and 1,000 stored
# comparisons in PostgreSQL (target: 100 ms each); perfbot trend over 500
# commits × 10 runs × 9 phases on SQLite (table, --git, png, --alpha
# 0.001). go test runs the packages' benchmarks one after the other.
bench-dashboard:
	mkdir -p $(BENCHOUT)
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench '^(BenchmarkTrendSeries1M|BenchmarkTrendSeries1MSQLite|BenchmarkDashboardIndex1M|BenchmarkDashboardCompare1M|BenchmarkTrend500)$$' \
		-benchtime 20x -timeout 30m ./store/ ./server/dashboard/ ./cmd/perfbot/ | tee $(BENCHOUT)/dashboard.txt

# What α and max_count cost or buy, by simulation (BENCHMARKS.md, docs/statistics.md).
bench-tradeoff:
	mkdir -p $(BENCHOUT)
	PERFBOT_SIM_TRADEOFF=1 $(GO) test -run '^TestSequentialTradeoff$$' -v -timeout 30m ./analysis | tee $(BENCHOUT)/sequential-tradeoff.txt

# Each fuzz target for FUZZTIME (make test runs their seed corpora only).
# A crasher lands in the package's testdata/fuzz/NAME/ and fails make test
# from then on: keep it there as the regression case once fixed.
FUZZTIME ?= 60s
FUZZ_TARGETS = ./github/webhook:FuzzParseCommand ./github/webhook:FuzzHandlerSignedBodies \
	./store:FuzzParseDSN ./runner:FuzzParseConfig ./runner/execute:FuzzParseOutput \
	./runner/readers:FuzzGbench ./runner/readers:FuzzCriterion ./runner/readers:FuzzLibtest \
	./runner/readers:FuzzHyperfine ./runner/readers:FuzzLines \
	./analysis:FuzzSplitName ./cmd/perfbot:FuzzLoadBotConfig
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; echo "fuzz $$fn ($$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

# The chaos soak at full size (RELIABILITY.md): perfbot serve and three
# workers as processes over a PostgreSQL of the test's own, about 1,100
# signed deliveries to 110 pull requests, 10 worker kills, 2 serve kills,
# 3 database restarts and 4 spells of GitHub faults; make test runs its
# short form (30–90 s: a killed worker's job waits for River's rescuer,
# which passes every 30 s).
chaos:
	PERFBOT_CHAOS=full PERFBOT_REQUIRE_POSTGRES=1 scripts/with-postgres.sh $(GO) test -count=1 -timeout 12m -run '^TestChaosSoak$$' -v ./cmd/perfbot

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

cuda: $(BUILD)/libperfbot_cuda.so $(BUILD)/perfbot_cuda_selftest

# The library without the self-test: a benchmark needs only the library, and
# a comparison builds it for each revision it measures.
cuda-lib: $(BUILD)/libperfbot_cuda.so

# The library is four translation units that make -j compiles side by side
# (cuda/ctx.cuh): the C ABI, the G1 MSM, the G2 MSM (the longest) and the
# NTT. One unit took 136–142 s on the H100 host's 16 cores (BENCHMARKS.md).
LIB_UNITS := perfbot_cuda msm_g1 msm_g2 ntt
LIB_OBJS  := $(LIB_UNITS:%=$(BUILD)/cuda-obj/%.o)

$(BUILD)/cuda-obj/%.o: cuda/%.cu $(CUDA_SRC)
	@mkdir -p $(BUILD)/cuda-obj
	$(NVCC) $(NVFLAGS) -Xcompiler -fPIC -c -o $@ $<

$(BUILD)/libperfbot_cuda.so: $(LIB_OBJS)
	$(NVCC) $(NVFLAGS) -shared -o $@ $(LIB_OBJS)

# The self-test compiles beside the library (make -j) and links to it.
$(BUILD)/selftest.o: cuda/selftest.cu $(HOST_SRC) $(CUDA_SRC)
	@mkdir -p $(BUILD)
	$(NVCC) $(NVFLAGS) -c -o $@ cuda/selftest.cu

$(BUILD)/perfbot_cuda_selftest: $(BUILD)/selftest.o $(BUILD)/libperfbot_cuda.so
	$(NVCC) $(NVFLAGS) -o $@ $< -L$(BUILD) -lperfbot_cuda -Xlinker -rpath,'$$ORIGIN'

# The GPU checks of a device visit that touches prover/ or cuda/: the CUDA
# self-test, the GPU Go tests (prover/gpu) and the critical-path GPU test
# (prover), against $(BUILD)/libperfbot_cuda.so. The Go test binaries are
# built by gpu-tests into GPU_TESTS; on a GPU host without Go, build them
# elsewhere (make gpu-tests) and carry them: gpu-check builds only what
# is missing.
GPU_TESTS ?= $(BUILD)/gpu-tests

gpu-tests:
	@mkdir -p $(GPU_TESTS)
	$(GO) test -c -o $(GPU_TESTS)/gpu.test ./prover/gpu
	$(GO) test -c -o $(GPU_TESTS)/prover.test ./prover

$(GPU_TESTS)/gpu.test $(GPU_TESTS)/prover.test:
	$(MAKE) gpu-tests

# The Go tests run first: they take about 20 s, the self-test's compile
# and checks about 4 minutes on the H100 host (2026-12-07), so a device
# call cut short still has them.
gpu-check: $(BUILD)/libperfbot_cuda.so $(GPU_TESTS)/gpu.test $(GPU_TESTS)/prover.test
	cd prover && PERFBOT_CUDA_LIB=$(abspath $(BUILD))/libperfbot_cuda.so $(abspath $(GPU_TESTS))/prover.test -test.count=1 -test.v \
		-test.run 'GPU|TestPhasesInsideMSMB2sSpanCarryNoHostCounters'
	cd prover/gpu && PERFBOT_CUDA_LIB=$(abspath $(BUILD))/libperfbot_cuda.so $(abspath $(GPU_TESTS))/gpu.test -test.count=1 -test.v
	$(MAKE) $(BUILD)/perfbot_cuda_selftest
	$(BUILD)/perfbot_cuda_selftest

# Our G1 MSM and Fr NTT timed beside sppark's (supranational/sppark) in one
# process on the same inputs (bench/sppark/, run by bench/sppark.sh on the
# GPU machine). Not part of the product: only this target needs sppark.
# SPPARK is sppark's source tree; BLST blst's (supranational/blst), by
# default SPPARK/blst as bench/sppark.sh pack lays them out: on the host,
# sppark's BLS12-381 field types are blst's (ff/bls12-381.hpp includes
# blst_t.hpp), so its half needs blst's headers and libblst.a. blst is
# built portable (it picks its ADX code at run time), sppark's half with
# the library's NVFLAGS and the defines of sppark's own BLS12-381 build.
BLST         ?= $(SPPARK)/blst
SPPARK_BUILD := $(BUILD)/sppark
ifneq ($(filter bench-sppark $(BUILD)/perfbot_sppark_bench,$(MAKECMDGOALS)),)
ifeq ($(SPPARK),)
$(error SPPARK is not set: make bench-sppark SPPARK=<sppark's source tree> (bench/sppark.sh pack writes one, blst's inside))
endif
ifneq ($(words $(wildcard $(SPPARK)/msm/pippenger.cuh $(SPPARK)/ntt/ntt.cuh $(SPPARK)/util/all_gpus.cpp)),3)
$(error SPPARK=$(SPPARK) is not sppark's source tree: it lacks msm/pippenger.cuh, ntt/ntt.cuh or util/all_gpus.cpp)
endif
ifneq ($(words $(wildcard $(BLST)/src/blst_t.hpp $(BLST)/src/server.c $(BLST)/build/assembly.S)),3)
$(error BLST=$(BLST) is not blst's source tree (src/blst_t.hpp, src/server.c, build/assembly.S): sppark's BLS12-381 needs blst on the host; set BLST=<blst's tree>)
endif
endif
# sppark's commit, which the benchmark prints: SPPARK/COMMIT, written by
# bench/sppark.sh pack (git archive leaves no .git behind).
SPPARK_COMMIT = $(shell cat $(SPPARK)/COMMIT 2>/dev/null || echo unknown)
SPPARK_FLAGS  = -DFEATURE_BLS12_381 -D__BLST_PORTABLE__ -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
	-I$(SPPARK) -I$(BLST)/src -Xcompiler -Wno-unused-function
SPPARK_OBJS   = $(SPPARK_BUILD)/side_by_side.o $(SPPARK_BUILD)/sppark_side.o $(SPPARK_BUILD)/all_gpus.o \
	$(SPPARK_BUILD)/libblst.a

bench-sppark: $(BUILD)/perfbot_sppark_bench

$(SPPARK_BUILD)/libblst.a: $(BLST)/src/server.c $(BLST)/build/assembly.S
	@mkdir -p $(SPPARK_BUILD)
	$(CC) -O2 -fno-builtin -fPIC -D__BLST_PORTABLE__ -c -o $(SPPARK_BUILD)/blst_server.o $(BLST)/src/server.c
	$(CC) -O2 -fno-builtin -fPIC -D__BLST_PORTABLE__ -c -o $(SPPARK_BUILD)/blst_assembly.o $(BLST)/build/assembly.S
	$(AR) rcs $@ $(SPPARK_BUILD)/blst_server.o $(SPPARK_BUILD)/blst_assembly.o

$(SPPARK_BUILD)/sppark_side.o: bench/sppark/sppark_side.cu bench/sppark/sppark_side.h
	@mkdir -p $(SPPARK_BUILD)
	$(NVCC) $(NVFLAGS) $(SPPARK_FLAGS) -DSPPARK_COMMIT='"$(SPPARK_COMMIT)"' -c -o $@ $<

# What sppark's Rust build compiles beside every user: the device table
# behind select_gpu and gpu_props.
$(SPPARK_BUILD)/all_gpus.o: $(SPPARK)/util/all_gpus.cpp
	@mkdir -p $(SPPARK_BUILD)
	$(NVCC) $(NVFLAGS) $(SPPARK_FLAGS) -c -o $@ $<

$(SPPARK_BUILD)/side_by_side.o: bench/sppark/side_by_side.cu bench/sppark/sppark_side.h $(HOST_SRC) $(CUDA_SRC)
	@mkdir -p $(SPPARK_BUILD)
	$(NVCC) $(NVFLAGS) -I cuda -c -o $@ $<

$(BUILD)/perfbot_sppark_bench: $(SPPARK_OBJS) $(BUILD)/libperfbot_cuda.so
	$(NVCC) $(NVFLAGS) -o $@ $(SPPARK_OBJS) -L$(BUILD) -lperfbot_cuda -Xcompiler -pthread -Xlinker -rpath,'$$ORIGIN'

clean:
	rm -rf $(BUILD)
