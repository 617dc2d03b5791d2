#!/usr/bin/env bash
# clang-format (14) with the repository's .clang-format over every C++ file of src, tests, bench
# and fuzz. Fails, naming the files, when one differs from its formatted form.
# `scripts/check-format.sh --fix` formats them in place instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
format=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$format" ]]; then
  echo "check-format: clang-format (14) is not installed" >&2
  exit 2
fi
mapfile -t files < <(find src tests bench fuzz \( -name '*.cc' -o -name '*.h' \) | sort)
if [[ "${1:-}" == "--fix" ]]; then
  "$format" -i "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if (( ${#bad[@]} > 0 )); then
  printf 'check-format: not formatted (run scripts/check-format.sh --fix): %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
