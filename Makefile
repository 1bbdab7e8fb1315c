# perfbot — build, test, benchmark, lint.
#
#   make build   the perfbot binary in build/
#   make test    vet and every test (what CI runs)
#   make bench   the Go benchmarks and the prove benchmark script (long)
#   make lint    gofmt, go vet, staticcheck

GO        ?= go
BUILD     ?= build
BENCHTIME ?= 3x
BENCHOUT  ?= $(BUILD)/bench

.PHONY: all build test bench lint fmt clean

all: build

build:
	$(GO) build -o $(BUILD)/perfbot ./cmd/perfbot

# The store suite runs on SQLite and on PostgreSQL: scripts/with-postgres.sh
# starts a throwaway cluster unless PERFBOT_TEST_DATABASE_URL is set, and
# PERFBOT_REQUIRE_POSTGRES makes a missing server a failure, never a skip.
test:
	$(GO) vet ./...
	PERFBOT_REQUIRE_POSTGRES=1 scripts/with-postgres.sh $(GO) test -count=1 -timeout 20m ./...

bench: build
	mkdir -p $(BENCHOUT)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -timeout 60m ./prover/... | tee $(BENCHOUT)/go-bench.txt
	bench/prove.sh $(BUILD)/perfbot $(BENCHOUT)

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BUILD)
