#!/usr/bin/env bash
# Runs every cargo-fuzz target of lanyard-net for SECONDS each (default 20), starting from
# the committed seed corpus, and fails on the first crash. New inputs the fuzzer finds go
# to a scratch directory, never into the committed corpus.
#
#   net/fuzz/run.sh [SECONDS] [TARGET...]
#
# Needs the nightly toolchain and cargo-fuzz (.ci/run installs both). Builds without a
# sanitizer (-s none): the code under test is safe Rust, and the build is three times
# quicker; pass FUZZ_SANITIZER=address for AddressSanitizer.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-20}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
sanitizer=${FUZZ_SANITIZER:-none}
# FUZZ_TARGET_DIR: where the fuzzers are built (cargo-fuzz's own folder if unset).
target_dir=()
if [ -n "${FUZZ_TARGET_DIR:-}" ]; then
  target_dir=(--target-dir "$FUZZ_TARGET_DIR")
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cargo +nightly fuzz build -s "$sanitizer" "${target_dir[@]}"
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  echo "== fuzz $t for ${seconds}s"
  if ! cargo +nightly fuzz run -s "$sanitizer" "${target_dir[@]}" "$t" "$scratch/$t" "corpus/$t" -- \
      -max_total_time="$seconds" -print_final_stats=1 >"$scratch/$t.log" 2>&1; then
    tail -40 "$scratch/$t.log" >&2
    echo "fuzz target $t crashed: the input is in net/fuzz/artifacts/$t/" >&2
    exit 1
  fi
  grep -E "^Done|stat::number_of_executed_units|stat::average_exec_per_sec" "$scratch/$t.log" | tr '\n' ' '
  echo
done
