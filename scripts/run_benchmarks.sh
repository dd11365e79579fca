#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmarks: install what is missing, build, run the Google Benchmark suites of experiments/bench,
# write results/bench/<suite>.json (and the console output to <suite>.log), then regenerate the
# tables of docs/benchmarks.md from those files with experiments/bench_tables.py.
#
#   bash scripts/run_benchmarks.sh [suite ...]
#
# Suites (default: all four, in this order), each with 3 repetitions and only their aggregates
# kept (the tables use the medians):
#   integrators          a few minutes: 20 benchmarks of at least 0.5 s each
#   balanced_truncation  about 3 minutes, peak 5.2 GiB: each repetition is one run per size
#                        (Iterations(1)), about a minute per repetition, most of it at N = 10^6
#   reduced_chain        about 14 minutes, peak 10.8 GB at N = 10^6: the training runs and PODs
#                        are built once per N and shared by the repetitions, which only re-time
#                        the steps, so three cost hardly more than one
#   multibody            about a minute
# Run them on a quiet machine: the tables print the load average the suites saw.
#
# Environment:
#   MOR_BENCH_FILTER=regex   only the benchmarks matching it (--benchmark_filter), for a quick
#                            check: the JSON goes to results/bench/filtered/, the tables are
#                            printed and docs/benchmarks.md is left alone (a partial table would
#                            replace the whole one)
#   MOR_BENCH_REPETITIONS=k  repetitions instead of 3
#   MOR_BUILD_DIR            the build tree (default build/)
# Example: MOR_BENCH_FILTER='/1000(/|$)' MOR_BENCH_REPETITIONS=1 \
#              bash scripts/run_benchmarks.sh integrators
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ALL_SUITES=(integrators balanced_truncation reduced_chain multibody)
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=("${ALL_SUITES[@]}")
for s in "${suites[@]}"; do
  if [[ " ${ALL_SUITES[*]} " != *" $s "* ]]; then
    echo "error: unknown suite '$s' (known: ${ALL_SUITES[*]})" >&2
    exit 1
  fi
done
repetitions="${MOR_BENCH_REPETITIONS:-3}"
if [[ ! "$repetitions" =~ ^[1-9][0-9]*$ ]]; then
  echo "error: MOR_BENCH_REPETITIONS='$repetitions' is not a positive integer" >&2
  exit 1
fi

install_packages
build_project -DMOR_BUILD_BENCHMARKS=ON
cd "$ROOT"

out_dir="results/bench"
filter_args=()
if [ -n "${MOR_BENCH_FILTER:-}" ]; then
  out_dir="results/bench/filtered"
  filter_args=(--benchmark_filter="$MOR_BENCH_FILTER")
fi
mkdir -p "$out_dir"

# JSON and log are written under temporary names and renamed once the suite has finished, so an
# interrupted run leaves the previous files in place, not half of new ones.
tmp_json="" tmp_log=""
trap 'rm -f "$tmp_json" "$tmp_log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
written=()
for s in "${suites[@]}"; do
  echo "== bench: $s, $repetitions repetitions${MOR_BENCH_FILTER:+, filter $MOR_BENCH_FILTER}"
  tmp_json="$out_dir/.$s.json.tmp.$$" tmp_log="$out_dir/.$s.log.tmp.$$"
  start=$SECONDS
  "$BUILD_DIR/experiments/bench/bench_$s" "${filter_args[@]}" \
    --benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true \
    --benchmark_out="$tmp_json" --benchmark_out_format=json 2>&1 | tee "$tmp_log"
  mv "$tmp_log" "$out_dir/$s.log"
  mv "$tmp_json" "$out_dir/$s.json"
  tmp_json="" tmp_log=""
  written+=("$out_dir/$s.json")
  echo "== bench: $s took $((SECONDS - start)) s: $out_dir/$s.json"
done

if [ -n "${MOR_BENCH_FILTER:-}" ]; then
  echo "== tables (filtered run: docs/benchmarks.md not updated)"
  /usr/bin/python3 experiments/bench_tables.py "${written[@]}"
else
  echo "== tables: docs/benchmarks.md"
  /usr/bin/python3 experiments/bench_tables.py --update docs/benchmarks.md "${written[@]}"
fi
