#!/usr/bin/env bash
# Fuzz the row and profile loaders longer than the test suite does, and report
# how many inputs were tried.
#
# Usage: bench/fuzz.sh [CASES]   (default 100000; about 1 ms each here)
#
# Runs the same proptest as `cargo test` (runner/tests/bad_input.rs,
# fuzz_the_row_and_profile_loaders): mutated real rows and profiles,
# arbitrary text and raw bytes through load_row, load_profile and parse_row.
# Every input must be refused with a file:line message or accepted, never
# panic, and never take over 10 s. The last line is the count.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-100000}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! FUZZ_CASES="$cases" cargo test -q -p runner --test bad_input \
    fuzz_the_row_and_profile_loaders -- --nocapture >"$log" 2>&1; then
  cat "$log"
  echo "fuzz: FAILED (the minimal failing input is above)"
  exit 1
fi
grep '^fuzz:' "$log"
