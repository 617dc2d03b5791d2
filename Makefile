# The two commands a newcomer needs: `make run` and `make test`. Everything else is a helper.
.PHONY: all deps build test test-dev test-dev-only test-asan test-slow bench fuzz run run-slurm clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake --preset dev >/dev/null
	cmake --build --preset dev

# Every test, once. The C++ and Python suites run in the AddressSanitizer + UBSan build, which is
# the debug build plus the sanitizers (its server, under every integration suite, fails them on
# a memory error too); running them in the plain debug build as well doubled their time and
# took CI past its hour. The debug build (warnings as errors, as the sanitizer build) serves the
# checks that need no sanitizer, clang-format, clang-tidy and the layering (LABELS lint), and
# the Slurm suites, whose jobs slurmd starts (LABELS slurm): ctest's dev-only preset.
test: deps test-asan test-dev-only

# The whole suite in the debug build, as a developer runs it.
test-dev: build
	ctest --preset dev

test-dev-only: deps
	cmake --preset dev >/dev/null
	cmake --build --preset dev --target allot
	ctest --preset dev-only

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
