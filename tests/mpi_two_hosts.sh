#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `mor sweep` under `mpirun --hostfile` on two hosts made on this machine, with no shared points
# folder (docs/sweeps.md, "Across hosts, tested"): rank 1's point files must reach rank 0 over
# MPI.
#
#   tests/mpi_two_hosts.sh MOR      (ctest mpi_two_hosts; root only, 15-30 s)
#
# The hosts are two network namespaces joined by a veth pair; Open MPI's TCP transport and its
# out-of-band channel keep to that pair, and its launch agent is a script that turns "ssh HOST
# COMMAND" into the command run in HOST's namespaces. Each host has a mount namespace of its own
# in which the sweep's output folder is its own directory and the other host's directory is
# hidden under an empty tmpfs, so the points folder is genuinely not shared. Both hosts keep this
# machine's host name, as cloned machines or containers may: rank 0 must not take the name for
# the folder. The test kills rank 1 once it has shipped a point (pausing rank 0 meanwhile, so
# that what is left does not depend on how fast mpirun ends it), resumes with the same command,
# and compares the merged table with a single-host run of the same sweep.
# Exit 0 passed, 1 failed, 77 skipped (ctest SKIP_RETURN_CODE) where namespaces cannot be made.
set -euo pipefail

MOR="$(realpath "${1:?usage: mpi_two_hosts.sh MOR}")"
PY=/usr/bin/python3
skip() {
  echo "SKIP: $*"
  exit 77
}

[ "$(id -u)" = 0 ] || skip "network and mount namespaces need root (running as uid $(id -u))"
for tool in ip unshare nsenter mount mpirun; do
  command -v "$tool" >/dev/null || skip "no '$tool' on PATH"
done
"$PY" -c 'import h5py' 2>/dev/null || skip "no h5py for $PY (Debian python3-h5py)"

tag="$$"
NS_A="mor2h_a_$tag" NS_B="mor2h_b_$tag"
IP_A=10.231.0.1 IP_B=10.231.0.2 NET=10.231.0.0/30
T="$(mktemp -d "${TMPDIR:-/tmp}/mor_two_hosts.XXXXXX")"
MPIRUN_PID=""

cleanup() {
  local rc=$? ns
  trap - EXIT INT TERM
  set +e
  [ -n "$MPIRUN_PID" ] && kill -KILL "$MPIRUN_PID" 2>/dev/null
  for ns in "$NS_A" "$NS_B"; do
    [ -e "/run/netns/$ns" ] || continue
    # Only what this script started runs in its namespaces.
    for p in $(ip netns pids "$ns"); do kill -KILL "$p" 2>/dev/null; done
    ip netns del "$ns"
  done
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    for log in "$T"/*.log; do
      [ -f "$log" ] && { echo "--- $log"; cat "$log"; }
    done
  fi
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
  echo "FAIL: $*"
  exit 1
}

# Namespaces an earlier run left when it was killed outright (SIGKILL, e.g. a ctest timeout),
# named after its process, which is gone.
for ns in $(ip netns list 2>/dev/null | sed -n 's/^\(mor2h_[ab]_[0-9]*\).*/\1/p'); do
  kill -0 "${ns##*_}" 2>/dev/null && continue
  for p in $(ip netns pids "$ns"); do kill -KILL "$p" 2>/dev/null; done
  ip netns del "$ns" 2>/dev/null || true
done

# The two hosts. A machine that cannot make them (no CAP_SYS_ADMIN / CAP_NET_ADMIN, a container
# without /run/netns) skips.
ip netns add "$NS_A" 2>"$T/netns.err" ||
  skip "cannot create a network namespace: $(cat "$T/netns.err")"
ip netns add "$NS_B"
ip link add "m2a$tag" type veth peer name "m2b$tag" 2>"$T/veth.err" ||
  skip "cannot create a veth pair: $(cat "$T/veth.err")"
ip link set "m2a$tag" netns "$NS_A"
ip link set "m2b$tag" netns "$NS_B"
ip -n "$NS_A" addr add "$IP_A/30" dev "m2a$tag"
ip -n "$NS_B" addr add "$IP_B/30" dev "m2b$tag"
for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
ip -n "$NS_A" link set "m2a$tag" up
ip -n "$NS_B" link set "m2b$tag" up
unshare --mount true 2>"$T/mount.err" ||
  skip "cannot create a mount namespace: $(cat "$T/mount.err")"

# The same paths on both hosts: the sweep file here (shared, as the docs require), the output
# folder $T/run, which is $T/host_a on A and $T/host_b on B.
mkdir -p "$T/cfg" "$T/run" "$T/host_a" "$T/host_b" "$T/single"
# Eight points of about the same cost (one N, eight orders), so that rank 0 has not done them all
# by the time rank 1 has sent its first.
POINTS=8
cat >"$T/cfg/two.toml" <<EOF
[sweep]
name = "two"
output = "$T/run/two.h5"
N = [120]
fit_min_N = 1
plots = false

[[study]]
name = "bt"
experiment = "$(dirname "$(realpath "$0")")/../experiments/bt_chain.toml"
set = { "analysis.hinf" = false, "analysis.bode_points" = 0, "simulation.t_end" = 10.0 }
grid.reduction.order = [4, 5, 6, 7, 8, 9, 10, 11]
EOF

# "in_host A|B COMMAND...": COMMAND in that host's network and mount namespaces.
cat >"$T/in_host" <<EOF
#!/bin/sh
case "\$1" in
  A) ns=$NS_A own=$T/host_a other=$T/host_b ;;
  B) ns=$NS_B own=$T/host_b other=$T/host_a ;;
  *) echo "in_host: unknown host '\$1'" >&2; exit 255 ;;
esac
shift
# From this script's mount namespace, not from the caller's (mpirun's, on A, hides B's folder).
exec nsenter --mount=/proc/$$/ns/mnt ip netns exec "\$ns" unshare --mount sh -c \\
  'mount --bind "\$0" $T/run && mount -t tmpfs -o size=64k none "\$1" && shift && exec "\$@"' \\
  "\$own" "\$other" "\$@"
EOF
# Open MPI's launch agent, called as "agent HOST COMMAND" (the command one string, for a shell).
cat >"$T/agent" <<EOF
#!/bin/sh
case "\$1" in
  $IP_A) host=A ;;
  $IP_B) host=B ;;
  *) echo "agent: unknown host '\$1'" >&2; exit 255 ;;
esac
shift
exec $T/in_host "\$host" sh -c "\$*"
EOF
chmod +x "$T/in_host" "$T/agent"
printf '%s slots=1\n%s slots=1\n' "$IP_A" "$IP_B" >"$T/hostfile"

# Sanity of the set-up: each host sees its own folder and not the other's.
touch "$T/host_a/on_a" "$T/host_b/on_b"
[ "$("$T/in_host" B ls "$T/run")" = on_b ] || fail "host B does not see its own folder"
[ -z "$("$T/in_host" B ls "$T/host_a")" ] || fail "host B sees host A's folder"
rm "$T/host_a/on_a" "$T/host_b/on_b"

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
sweep_two_hosts() { # LOG: the sweep on both hosts, mpirun on A
  "$T/in_host" A mpirun --allow-run-as-root --hostfile "$T/hostfile" -np 2 \
    --mca plm_rsh_agent "$T/agent" --mca btl tcp,self --mca btl_tcp_if_include "$NET" \
    --mca oob_tcp_if_include "$NET" --mca orte_tmpdir_base "$T" \
    "$MOR" sweep "$T/cfg/two.toml" --no-plots --jobs 1 >"$1" 2>&1
}
t0=$(date +%s%N)

# The rank of `mor sweep` in a host's namespace (not mpirun, not a point's worker).
rank_pid() {
  local p
  for p in $(ip netns pids "$1"); do
    case "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" in
      *" --worker "*) ;;
      "$MOR sweep "*) echo "$p" ;;
    esac
  done
}

# 1. Run, and kill rank 1 once it has shipped a point. Rank 0 is paused at the same moment, so
# that what is left to resume does not depend on how fast mpirun then ends it.
sweep_two_hosts "$T/killed.log" &
MPIRUN_PID=$!
rank1=""
for _ in $(seq 600); do
  if grep -q "(rank 1)" "$T/killed.log"; then
    rank0=$(rank_pid "$NS_A")
    rank1=$(rank_pid "$NS_B")
    break
  fi
  kill -0 "$MPIRUN_PID" 2>/dev/null || break
  sleep 0.05
done
[ -n "$rank1" ] || fail "rank 1 shipped no point before the sweep ended (see killed.log)"
[ -n "$rank0" ] && kill -STOP "$rank0"
kill -KILL "$rank1"
t_kill=$(date +%s%N)
status=0
wait "$MPIRUN_PID" || status=$?
MPIRUN_PID=""
t_end=$(date +%s%N)
[ "$status" != 0 ] || fail "mpirun exited 0 although rank 1 was killed"
stored_a=$(find "$T/host_a/two.points" -name '*.h5' | wc -l)
shipped=$(sed -n 's/^\[[0-9]*\/[0-9]*\] \([^ ]*\) done .*(rank 1)$/\1/p' "$T/killed.log")
echo "killed rank 1 (pid $rank1) after $(((t_kill - t0) / 1000000)) ms; mpirun exited $status" \
  "$(((t_end - t_kill) / 1000000)) ms later; host A holds $stored_a of $POINTS points"
echo "  shipped before the kill: $(echo "$shipped" | tr '\n' ' ')"
[ "$stored_a" -lt "$POINTS" ] || fail "the sweep had finished before the kill"
for key in $shipped; do
  [ -f "$T/host_a/two.points/$key.h5" ] || fail "$key, done on rank 1, is not on host A"
  cmp -s "$T/host_a/two.points/$key.h5" "$T/host_b/two.points/$key.h5" ||
    fail "$key on host A is not the file rank 1 wrote on host B"
done

# 2. Resume with the same command: only the missing points run.
sweep_two_hosts "$T/resumed.log" || fail "the resumed sweep failed (see resumed.log)"
grep -q "^sweep two: $stored_a of $POINTS points stored" "$T/resumed.log" ||
  fail "the resumed sweep did not keep the $stored_a stored points"
# Rank 1 asks for a point within milliseconds: with two or more left, it runs one.
[ $((POINTS - stored_a)) -lt 2 ] || grep -q "(rank 1)" "$T/resumed.log" ||
  fail "rank 1 ran none of the $((POINTS - stored_a)) points of the resumed sweep"
t1=$(date +%s%N)
echo "resumed: $(grep -c '^\[[0-9]*/[0-9]*\] .* done ' "$T/resumed.log") points run," \
  "$(grep -c '(rank 1)$' "$T/resumed.log") of them on rank 1, in $(((t1 - t_end) / 1000000)) ms"

# 3. The same sweep on one host, one point at a time.
"$MOR" sweep "$T/cfg/two.toml" --no-plots --jobs 1 --set "sweep.output=$T/single/two.h5" \
  >"$T/single.log" 2>&1 || fail "the single-host sweep failed (see single.log)"

# 4. The merged table is complete and equals the single-host one.
"$PY" - "$T/run/two.h5" "$T/host_a/two.h5" "$T/single/two.h5" "$T/host_a/two.points" \
  "$T/host_b/two.points" <<'EOF'
import math, os, sys
import h5py, numpy as np

# Timings and memory differ from run to run; every other column is a result.
def is_result(name):
    return not (name.endswith("_s") or name in ("speedup", "peak_rss_mib"))

visible, merged, single, points_a, points_b = sys.argv[1:]
if os.path.exists(visible):
    sys.exit(f"FAIL: the merged file is visible outside host A at {visible}")
with h5py.File(merged, "r") as a, h5py.File(single, "r") as b:
    assert a.attrs["complete"] == 1, "the merged sweep is not complete"
    assert a.attrs["points_done"] == a.attrs["points_total"] == b.attrs["points_total"]
    ta, tb = a["table"], b["table"]
    assert sorted(ta) == sorted(tb), (sorted(ta), sorted(tb))
    rtol, checked, worst = 1e-10, 0, 0.0
    for name in sorted(ta):
        x, y = ta[name][()], tb[name][()]
        if x.dtype.kind in "SO":
            assert list(x) == list(y), f"{name}: {list(x)} != {list(y)}"
        elif x.dtype.kind == "i":
            assert np.array_equal(x, y), f"{name}: {x} != {y}"
        elif is_result(name):
            same = np.isclose(x, y, rtol=rtol, atol=0) | (np.isnan(x) & np.isnan(y))
            assert same.all(), f"{name}: {x} != {y} (rtol {rtol})"
            checked += int(np.isfinite(x).sum())
            finite = np.isfinite(x) & (y != 0)
            if finite.any():
                worst = max(worst, float(np.max(np.abs(x[finite] / y[finite] - 1))))
    status = [s.decode() for s in ta["status"][()]]
    assert status == ["done"] * len(status), status
    for key in ta["key"][()]:
        assert key.decode() in a["points"], f"no /points/{key.decode()} in the merged file"
on_a = {f for f in os.listdir(points_a) if f.endswith(".h5")}
on_b = {f for f in os.listdir(points_b) if f.endswith(".h5")}
assert on_b and on_b < on_a, (on_a, on_b)
print(f"merged table: {len(status)} points done, equal to the single-host table "
      f"({checked} finite result figures within rtol {rtol}, largest difference {worst:.1e}; "
      f"strings and integers exact)")
print(f"host A's points folder: {len(on_a)} files; host B's: {len(on_b)} "
      f"(the points rank 1 ran: {' '.join(sorted(f[:-3] for f in on_b))})")
EOF
echo "the two-host sweep, killed and resumed, took $(((t1 - t0) / 1000000)) ms; passed"
