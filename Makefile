# The two commands a newcomer needs: `make run` and `make test`. Everything else is a helper.
.PHONY: all deps build test test-dev test-asan test-slow bench fuzz run run-slurm clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake --preset dev >/dev/null
	cmake --build --preset dev

# Every test, once, in the AddressSanitizer + UBSan build: the debug build (warnings as errors)
# plus the sanitizers, so the server under every integration suite, the jobs slurmd starts on
# the Slurm test cluster and the C++ tests all fail on a memory error too. Running the same suites
# in the plain debug build as well doubled their time and took CI past its hour; `make test-dev`
# runs them there, as a developer may.
test: deps test-asan

test-dev: build
	ctest --preset dev

test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan
	ctest --preset asan

# The long randomized suites (more seeds than the normal run).
test-slow: build
	ctest --preset dev-slow

bench: deps
	cmake --preset release >/dev/null
	cmake --build --preset release
	scripts/run-benchmarks.sh build/release

# libFuzzer (clang) on the request decoders and SigV4: each target of fuzz/ for FUZZ_SECONDS
# (default 60) from its seeds; prints executions and findings per target (fuzz/run.sh).
fuzz: deps
	@scripts/install-fuzz-deps.sh
	fuzz/run.sh

run: build
	@scripts/run.sh

# The same on the Slurm test cluster (scripts/slurm-cluster.sh, started as root): Allot decides,
# Slurm places and runs (docs/slurm.md).
run-slurm: build
	@scripts/run-slurm.sh

clean:
	rm -rf build
