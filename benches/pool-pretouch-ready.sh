#!/usr/bin/env bash
# Time to ready of one Manager process against its pool size and pre-touch mode, and how long the touch itself takes.
# "ready" is the Manager's own counter (process start -> CnC ready, JVM boot included), "touch" the toucher's elapsed
# time (counter "Pool touch time"): in background mode the touch ends after ready, in blocking mode before it.
# Modes run interleaved per size, so a drift of this shared VM's speed hits both alike.
# Usage: benches/pool-pretouch-ready.sh [ROUNDS] [SIZES] [MODES]   e.g. 3 "256m 1g 5g" "background blocking off"
# (run after a build: uses manager/target). One JSON object per run on stdout. NO_TOUCH_WAIT=1 stops each Manager as
# soon as it is ready (time to ready only; touchMs is then the touch so far).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
rounds=${1:-3}; sizes=${2:-256m 1g 5g}; modes=${3:-background blocking}
JAVA_HOME=$(find_jdk)
cd "$ORBITKV_ROOT"
CP="$(ls manager/target/manager-*.jar | head -1):$(ls manager/target/lib/*.jar | tr '\n' :)"
read -r -a FLAGS <<<"$(jvm_flags)"
orbitkv() { "$JAVA_HOME/bin/java" "${FLAGS[@]}" -cp "$CP" io.orbitkv.manager.cli.OrbitKvCli "$@"; }
counter() { sed -n "s/^ *$1: *\([0-9,]*\) - .*/\1/p" | tr -d ,; }

for round in $(seq 1 "$rounds"); do
  for size in $sizes; do
    for mode in $modes; do
      dir="/dev/shm/okv-pretouch-$$-$round"; log=$(mktemp)
      # Started directly, not through the function, so that $! is the JVM itself and the kill below reaches it.
      "$JAVA_HOME/bin/java" "${FLAGS[@]}" -cp "$CP" io.orbitkv.manager.cli.OrbitKvCli \
        manager --dir "$dir" --pool-bytes "$size" --pool-pretouch "$mode" >"$log" 2>&1 &
      pid=$!
      trap 'kill "$pid" 2>/dev/null' EXIT
      until grep -q "ready [0-9]* ms" "$log"; do
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.05
      done
      # The touch is done once state (counter 132) reads 2, or there is none (mode, counter 131, is 0 for off);
      # polled sparsely, since each stat is a JVM on 2 cores.
      while true; do
        stat=$(orbitkv stat --dir "$dir" --once)
        [ "$(counter 132 <<<"$stat")" = 2 ] || [ "$(counter 131 <<<"$stat")" = 0 ] || [ "${NO_TOUCH_WAIT:-0}" = 1 ] && break
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 5
      done
      kill "$pid"; wait "$pid" 2>/dev/null || true
      trap - EXIT
      echo "{\"round\": $round, \"poolBytes\": \"$size\", \"mode\": \"$mode\", \"readyMs\": $(counter 134 <<<"$stat")," \
        "\"touchMs\": $(counter 133 <<<"$stat"), \"touchedBytes\": $(counter 130 <<<"$stat")," \
        "\"load1\": $(cut -d' ' -f1 /proc/loadavg)}"
      rm -f "$log"; rm -rf "$dir"
    done
  done
done
