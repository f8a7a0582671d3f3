#!/usr/bin/env bash
# Fuzz the row and profile loaders and the reply surface longer than the
# test suite does, and report how many inputs were tried.
#
# Usage: bench/fuzz.sh [CASES] [REPLY_CASES]
#   CASES        loader inputs (default 100000; about 1 ms each here)
#   REPLY_CASES  reply inputs, each through both reply fuzzes (default CASES)
#
# Runs the same proptests as `cargo test`:
# - runner/tests/bad_input.rs, fuzz_the_row_and_profile_loaders: mutated
#   real rows, sweep rows and profiles, arbitrary text and raw bytes through
#   load_row, sweep::row::load,
#   load_profile and parse_row. Every input must be refused with a
#   file:line message or accepted, never panic, never take over 10 s.
# - runner/tests/reply_fuzz.rs: arbitrary status, header values and body
#   bytes through the pure reply check (against a model of its rules), and
#   arbitrary raw bytes (framing, chunking, signed lengths, 1xx, duplicate
#   headers, early close) served from a TcpListener on 127.0.0.1 to both
#   clients (http::Connection on hyper, load::wire on httparse): each case
#   both read the same first reply or both refuse it. No panic anywhere
#   (spawned tasks included), every call bounded in time and size.
# The last lines are the counts, times and panics; then the wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-100000}"
reply_cases="${2:-$cases}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
started=$(date +%s)
# Build first, so the times below are the fuzz's.
cargo test -q -p runner --test bad_input --test reply_fuzz --no-run >"$log" 2>&1 || {
  cat "$log"
  echo "fuzz: FAILED to build"
  exit 1
}
run() {
  local what="$1"
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log"
    echo "fuzz: FAILED in $what (the minimal failing input is above)"
    exit 1
  fi
  grep -a -o 'fuzz:.*' "$log"
}
run "the loaders" env FUZZ_CASES="$cases" cargo test -q -p runner --test bad_input \
  fuzz_the_row_and_profile_loaders -- --nocapture
run "the reply surface" env REPLY_FUZZ_CASES="$reply_cases" cargo test -q -p runner \
  --test reply_fuzz fuzz_ -- --nocapture
echo "fuzz: all done in $(($(date +%s) - started)) s"
