#!/usr/bin/env bash
# Installs what `make fuzz` needs beyond scripts/install-deps.sh: clang and its runtime libraries
# (libFuzzer, ASan, UBSan), only if missing. `make test` does not need them.
exec "$(dirname "$0")/install-deps.sh" clang libclang-rt-dev
