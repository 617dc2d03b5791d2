#!/usr/bin/env bash
# `make run`: builds (done by make before this script) and starts what exists so far.
# The engine is a library; the server that speaks the AWS Batch API is the next milestone.
set -euo pipefail
cat <<'TEXT'
Allot is built (build/dev).

What exists today is the scheduling engine (src/engine) with its tests and benchmarks:
  make test     every test: the debug build and the AddressSanitizer + UBSan build
  make bench    the engine benchmarks (release build); figures are in docs/benchmarks.md

The `allot server` that boto3 and the AWS CLI talk to is not built yet, so there is nothing to
start; `make run` will start it once it exists.
TEXT
