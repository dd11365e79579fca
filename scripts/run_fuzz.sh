#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Fuzzing with clang's libFuzzer: builds the targets of tests/fuzz (MOR_FUZZ, clang-14, every
# target of ours with ASan + UBSan) in build-fuzz/, then runs each for a bounded time on a copy
# of its seed corpus (tests/fuzz/corpus/<target>/; what the run adds stays in
# build-fuzz/corpus/). A crash, a leak, a hang (one input over 10 s) or an input needing more
# than 2 GiB stops the script with the failing input in build-fuzz/artifacts/<target>/; crashes
# and loops inside HDF5 or matio (fuzz_results, fuzz_mat) are contained as the program contains
# them, counted and kept in build-fuzz/contained/<target>/ (tests/fuzz/fuzz_support.hpp).
#   MOR_FUZZ_SECONDS   seconds per target (default 60; CI)
#   MOR_FUZZ_RUNS      executions per target instead of a time (e.g. 1000000)
#   MOR_FUZZ_TARGETS   which targets (default: all, "experiment sweep results mat mtx")
#   MOR_FUZZ_SEGMENT_RUNS  restart the target after this many executions (default 0: never)
#   MOR_FUZZ_TIMEOUT   libFuzzer's -timeout in seconds (default 10; more at nice 19 on a busy
#                      machine, where a starved input is no hang)
#   MOR_FUZZ_JOBS      processes per target (default 1), sharing its corpus; MOR_FUZZ_RUNS is
#                      split between them, MOR_FUZZ_SECONDS is each one's time. Logs
#                      build-fuzz/fuzz_<target>.job<j>.log. Ctrl-C stops all and reports the
#                      executions so far (exit 130).
# Longer runs: MOR_FUZZ_SECONDS=3600 bash scripts/run_fuzz.sh, MOR_FUZZ_JOBS=2 for two processes
# per target; see docs/hardening.md (libFuzzer's own -jobs lacks the containment's handling).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_packages

FUZZ_DIR="${MOR_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
TARGETS=(${MOR_FUZZ_TARGETS:-experiment sweep results mat mtx})
# Line tables only (-g1): the reports name source lines, and the build is a third cheaper than
# with -g (measured on the sanitizer build, docs/hardening.md).
echo "== build: libFuzzer targets (clang-14, ASan + UBSan, -O2 -g1) in $FUZZ_DIR"
configure_clang "$FUZZ_DIR" "-O2 -g1 -DNDEBUG" -DMOR_FUZZ=ON -DMOR_BUILD_TESTS=OFF \
  -DMOR_BUILD_BENCHMARKS=OFF
build_in "$FUZZ_DIR" "${TARGETS[@]/#/fuzz_}" fuzz_selftest

# Leaks inside third-party libraries are suppressed with their reasons (tests/fuzz/lsan.supp).
# A single malloc/calloc above 1 GiB returns NULL, as it may on a real system: matio calloc()s
# what a damaged compressed v5 tag claims (2.69 GB in tests/fuzz/known/, 1.96 GB in another)
# before it inflates a byte, and reports the NULL as an error; the program never touches such a
# block, but ASan's shadow and quarantine of a block just under 2 GiB passed -rss_limit_mb.
# Inputs are at most 64 kB, so nothing of ours that the readers' claim checks let through needs
# 1 GiB (except a string array of over 33 million strings, 32 bytes each in memory, which a
# 64 kB file can hold only deflated); our own C++ `new` of such a size is still reported (ASan
# does not return NULL from a throwing new).
# ASan's quarantine of freed blocks (use-after-free detection) is 64 MB instead of 256: with 256
# and HDF5's free lists unlimited, fuzz_results held 1.7 GB after 3.5 minutes (24 November,
# evening); with 64 and the lists bounded (tests/fuzz/hdf5_free_lists.hpp), 120-400 MB over 60 s.
# fuzz_results and fuzz_mat refuse single allocations above 256 MB instead: HDF5's
# H5T__conv_vlen zeroes a buffer of the length a variable-length string's descriptor claims (up to
# 4 GB, inside H5Aread, before any check of ours can see it), matio zeroes what a damaged tag
# claims, and on the corpora the campaigns grow most inputs claim 512 MB to 1 GB: replaying them
# took 49.8 s (fuzz_results) and 71.6 s (fuzz_mat) with 1024 MB, 12.2 s and 10.9 s with 256, with
# the same coverage of our code (25 November; docs/hardening.md). What the readers' claim checks
# let through stays below 256 MB (a results matrix at most 68 MB, a string array's strings
# 135 MB), except a .mat variable of over 32 million one-byte entries (int8, logical, char),
# which a 64 kB file can hold only deflated at over 500:1, converted to doubles.
user_asan_options="${ASAN_OPTIONS:-}"
asan_options() {  # target
  local mb=1024
  { [ "$1" = results ] || [ "$1" = mat ]; } && mb=256
  echo "${user_asan_options:-detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=$mb:quarantine_size_mb=64}"
}
export ASAN_OPTIONS="$(asan_options selftest)"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/tests/fuzz/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# The containment's own check first (tests/fuzz/fuzz_selftest.cpp): each way a read can end,
# staged on purpose, must get its verdict, or a crash of ours could pass for a third-party one.
selftest_dir=$(mktemp -d)
printf x >"$selftest_dir/input"
selftest() {  # mode, expected verdict
  local out rc=0
  out=$(cd "$selftest_dir" && env -u MOR_FUZZ_CONTAINED_DIR MOR_FUZZ_SELFTEST="$1" \
    "$FUZZ_DIR/fuzz/fuzz_selftest" -timeout=20 -artifact_prefix="$selftest_dir/" input 2>&1) || rc=$?
  case $2 in
    ours) [ "$rc" -ne 0 ] && grep -q "in our code" <<<"$out" ;;
    crashed) [ "$rc" -eq 0 ] && grep -qE " [1-9][0-9]* crashed it inside" <<<"$out" ;;
    looped) [ "$rc" -eq 0 ] && grep -qE " [1-9][0-9]* looped there" <<<"$out" ;;
    in_process) [ "$rc" -ne 0 ] && grep -q "MOR_FUZZ_CONTAINED_IN_PROCESS" <<<"$out" ;;
    clean) [ "$rc" -eq 0 ] && grep -qE ": 0 crashed it inside .*, 0 looped there" <<<"$out" ;;
    slow) [ "$rc" -eq 0 ] && grep -qE "; [1-9][0-9]* used the CPU-time limit in our code" <<<"$out" ;;
  esac || { echo "$out" | tail -n 30 >&2; echo "error: the fuzz containment misjudged '$1' (expected: $2, exit $rc)" >&2; exit 1; }
}
for check in clean:clean ours_slow:slow ours_crash:ours ours_use_after_free:ours ours_abort:ours \
  zlib_crash:crashed zlib_crash_after_warnings:crashed zlib_loop:looped zlib_in_process:in_process; do
  selftest "${check%%:*}" "${check#*:}"
done
rm -rf "$selftest_dir"
echo "== containment check: 9 staged endings judged right (tests/fuzz/fuzz_selftest.cpp)"

# One fuzzing process of target $t: segments until its share of the budget is spent. Writes
# "executions segments in_process crashed looped stopped interrupted" to $log.counts; exits 1
# on a failure of ours after printing it.
fuzz_job() {  # target, log, executions (empty: MOR_FUZZ_SECONDS)
  local t=$1 log=$2 runs=$3 start=$SECONDS execs=0 segments=0 in_process=0 crashed=0 looped=0
  local stopped=0 interrupted=0 left limit segment_runs rc n w c l s unit
  : >"$log"
  # A run ends early only on a failure, or on a crash inside HDF5 or matio in the target's own
  # read of an input its worker read cleanly (HDF5's crashes depend on the heap layout; the
  # program reads such files in a child process, so they are contained; fuzz_support.hpp):
  # that input is kept with the contained ones and fuzzing goes on for the rest of the budget.
  while :; do
    if [ -n "$runs" ]; then
      left=$((runs - execs)) limit=(-runs="$left")
    else
      left=$((${MOR_FUZZ_SECONDS:-60} - (SECONDS - start))) limit=(-max_total_time="$left")
    fi
    [ "$left" -gt 0 ] || break
    # A fresh process every MOR_FUZZ_SEGMENT_RUNS executions: the HDF5 targets slow down as
    # their processes age (HDF5's leaks on damaged files pile up, and every leak check scans
    # them).
    segment_runs=${MOR_FUZZ_SEGMENT_RUNS:-0}
    if [ "$segment_runs" -gt 0 ] && { [ -z "$runs" ] || [ "$left" -gt "$segment_runs" ]; }; then
      limit+=(-runs="$segment_runs")
    fi
    segments=$((segments + 1))
    rc=0
    "$FUZZ_DIR/fuzz/fuzz_$t" "${limit[@]}" -timeout="${MOR_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
      -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts" \
      "$corpus" "$ROOT/tests/fuzz/corpus/$t" >"$log.segment" 2>&1 || rc=$?
    cat "$log.segment" >>"$log"
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log.segment" | tail -n 1)
    execs=$((execs + ${n:-0}))
    if w=$(grep -h "inputs read in a child first" "$log.segment" | tail -n 1); then
      read -r c l s < <(sed -E 's/.*: ([0-9]+) crashed it.*, ([0-9]+) looped there, ([0-9]+) were stopped.*/\1 \2 \3/' <<<"$w")
      crashed=$((crashed + c)) looped=$((looped + l)) stopped=$((stopped + s))
    fi
    if [ "$rc" -eq 0 ]; then
      [ "$segment_runs" -gt 0 ] && [ "${n:-0}" -ge "$segment_runs" ] && continue
      break
    fi
    if grep -q "libFuzzer: run interrupted" "$log.segment"; then  # Ctrl-C or SIGINT
      interrupted=1
      break
    fi
    if grep -q "MOR_FUZZ_CONTAINED_IN_PROCESS" "$log.segment"; then
      in_process=$((in_process + 1))
      unit=$(sed -n 's/.*Test unit written to //p' "$log.segment" | tail -n 1)
      if [ -n "$unit" ] && [ -f "$unit" ]; then mv "$unit" "$MOR_FUZZ_CONTAINED_DIR/"; fi
      continue
    fi
    tail -n 60 "$log.segment" >&2
    echo "error: fuzz_$t found a failing input (in $artifacts); log: $log" >&2
    echo "$execs $segments $in_process $crashed $looped $stopped $interrupted" >"$log.counts"
    return 1
  done
  rm -f "$log.segment"
  echo "$execs $segments $in_process $crashed $looped $stopped $interrupted" >"$log.counts"
}

# MOR_FUZZ_JOBS processes per target share the corpus (libFuzzer reloads it every second) and
# the budget: MOR_FUZZ_RUNS is split between them, MOR_FUZZ_SECONDS is each one's time. Ctrl-C
# stops them all; the executions so far are reported.
JOBS=${MOR_FUZZ_JOBS:-1}
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "error: MOR_FUZZ_JOBS must be a positive integer, got '$JOBS'" >&2; exit 2; }
trap ':' INT  # wait returns; the processes, also sent SIGINT, report and end
for t in "${TARGETS[@]}"; do
  corpus="$FUZZ_DIR/corpus/$t"
  artifacts="$FUZZ_DIR/artifacts/$t/"
  mkdir -p "$corpus" "$artifacts"
  # Inputs the results and .mat targets read first in a worker process, on which HDF5 or matio
  # crashed or looped there (the program's "damaged file" message), are kept here.
  export MOR_FUZZ_CONTAINED_DIR="$FUZZ_DIR/contained/$t"
  ASAN_OPTIONS="$(asan_options "$t")"
  budget="${MOR_FUZZ_SECONDS:-60} s" && [ -n "${MOR_FUZZ_RUNS:-}" ] && budget="$MOR_FUZZ_RUNS executions"
  [ "$JOBS" -gt 1 ] && budget="$budget, $JOBS processes"
  echo "== fuzz_$t ($budget), seeds tests/fuzz/corpus/$t"
  start=$SECONDS
  logs=() pids=()
  for ((j = 1; j <= JOBS; j++)); do
    log="$FUZZ_DIR/fuzz_$t.log" && [ "$JOBS" -gt 1 ] && log="$FUZZ_DIR/fuzz_$t.job$j.log"
    share=""
    if [ -n "${MOR_FUZZ_RUNS:-}" ]; then
      share=$((MOR_FUZZ_RUNS / JOBS + (j <= MOR_FUZZ_RUNS % JOBS ? 1 : 0)))
    fi
    rm -f "$log.counts"
    fuzz_job "$t" "$log" "$share" &
    logs+=("$log") pids+=($!)
  done
  # The first failure stops the other processes (SIGINT: libFuzzer prints its statistics).
  failed=0 left=("${pids[@]}")
  while [ "${#left[@]}" -gt 0 ]; do
    rc=0 ended=""
    wait -n -p ended "${left[@]}" || rc=$?
    # wait -p unsets `ended` when a signal interrupts it (Ctrl-C): the processes stop by themselves
    [ -n "${ended:-}" ] || continue
    for i in "${!left[@]}"; do [ "${left[$i]}" != "$ended" ] || unset "left[$i]"; done
    left=("${left[@]}")
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
      failed=1
      for p in "${left[@]}"; do pkill -INT -P "$p" 2>/dev/null || true; done
    fi
  done
  execs=0 segments=0 in_process=0 crashed=0 looped=0 stopped=0 interrupted=0
  for log in "${logs[@]}"; do
    [ -f "$log.counts" ] || { echo "error: fuzz_$t ended without its counts ($log)" >&2; exit 1; }
    read -r e g i c l s n <"$log.counts"
    execs=$((execs + e)) segments=$((segments + g)) in_process=$((in_process + i))
    crashed=$((crashed + c)) looped=$((looped + l)) stopped=$((stopped + s))
    interrupted=$((interrupted + n))
    rm -f "$log.counts"
  done
  [ "$failed" -eq 0 ] || { echo "error: fuzz_$t stopped after $execs executions" >&2; exit 1; }
  note="" && [ "$interrupted" -gt 0 ] && note=" (interrupted)"
  contained=""
  if [ "$t" = results ] || [ "$t" = mat ]; then
    contained=" (contained, inside HDF5 or matio: in the worker $crashed crashes, $looped loops, $stopped stopped by the wall-clock backstop; in process $in_process crashes)"
  fi
  echo "   fuzz_$t: $execs executions in $((SECONDS - start)) s ($segments run(s))$note, no crash, leak or hang of ours$contained"
  [ "$interrupted" -eq 0 ] || exit 130
done
