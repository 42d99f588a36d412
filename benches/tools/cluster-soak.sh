#!/usr/bin/env bash
# Soak of the demo cluster: `orbitkv cluster up --managers N` with default flags, a prefix published on a and
# looked up as peer candidates from every other Manager, then MINUTES of idling while each Manager's CPU (from
# /proc/PID/stat) and membership counters are sampled; at the end the lookups are repeated and the cluster stopped.
#
#   benches/tools/cluster-soak.sh [--managers 3] [--minutes 30] [--name soak] [--json FILE]
#
# Prints one line per sample and a summary: per Manager its CPU share over the soak, its registration state, epoch
# and the membership counters (keepalives, expiries, re-registrations) as `orbitkv stat` shows them. Run it from a
# checkout nobody rebuilds meanwhile: the Managers load classes from its jars for as long as they run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
managers=3
minutes=30
name=soak
json=""
while [ $# -gt 0 ]; do
  case "$1" in
    --managers) managers=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    *) echo "cluster-soak: unknown option $1" >&2; exit 2 ;;
  esac
done
orbitkv="$root/scripts/orbitkv"
state="${TMPDIR:-/tmp}/orbitkv-cluster-$name"
hz=$(getconf CLK_TCK)
letters=(a b c d e f g h i j k l m n o p)
nodes=("${letters[@]:0:$managers}")

eval "$("$orbitkv" cluster up --managers "$managers" --name "$name")"
# Built once by `cluster up`: a source edit during the soak must not rebuild the jars under the running Managers.
export ORBITKV_SKIP_BUILD=1
trap '"$root/scripts/cluster" down --name "$name" || true' EXIT

pid_of() { cat "$state/$1.pid"; }
ticks_of() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

lookup_all() {
  local node peers
  for node in "${nodes[@]:1}"; do
    peers=$("$orbitkv" client --dir "$(cat "$state/$node.dir")" lookup --peers --namespace soak --blocks 32 \
      --block-bytes 4096 --keys=false | sed -n 's/.*"peerKeys":\([0-9]*\).*/\1/p')
    echo "  lookup from $node: ${peers:-0} of 32 keys offered as peer candidates"
  done
}

"$orbitkv" client --dir "$(cat "$state/a.dir")" publish --namespace soak --blocks 32 --block-bytes 4096 --keys=false \
  >/dev/null
echo "cluster-soak: published 32 blocks on a; peer lookups right after start:"
# The catalog hosts see a's announcements within milliseconds; poll briefly so the first lookup is not a race.
for _ in $(seq 1 50); do
  lookup_all | grep -q " 0 of 32" || break
  sleep 0.2
done
lookup_all

declare -A start_ticks
for node in "${nodes[@]}"; do start_ticks[$node]=$(ticks_of "$(pid_of "$node")"); done
start_s=$SECONDS
end_s=$((start_s + minutes * 60))
while [ $SECONDS -lt $end_s ]; do
  sleep 30
  line="t=$((SECONDS - start_s))s"
  for node in "${nodes[@]}"; do
    pid=$(pid_of "$node")
    if kill -0 "$pid" 2>/dev/null; then
      line+="  $node cpu $(awk -v t="$(ticks_of "$pid")" -v s="${start_ticks[$node]}" -v hz="$hz" \
        -v e=$((SECONDS - start_s)) 'BEGIN {printf "%.2f%%", 100 * (t - s) / hz / (e > 0 ? e : 1)}')"
      line+=" $("$orbitkv" stat --dir "$(cat "$state/$node.dir")" --once --rate-window-ms 0 2>&1 |
        sed -n 's/^  membership: //p' | head -n 1 || true)"
    else
      line+="  $node DEAD"
    fi
  done
  echo "$line"
done

echo "cluster-soak: after ${minutes} min:"
lookup_all
summary=()
for node in "${nodes[@]}"; do
  pid=$(pid_of "$node")
  elapsed=$((SECONDS - start_s))
  cpu=$(awk -v t="$(ticks_of "$pid")" -v s="${start_ticks[$node]}" -v hz="$hz" -v e="$elapsed" \
    'BEGIN {printf "%.3f", 100 * (t - s) / hz / e}')
  echo "== $node (pid $pid): CPU ${cpu}% of a core over ${elapsed} s"
  "$orbitkv" stat --dir "$(cat "$state/$node.dir")" --once --rate-window-ms 0 |
    grep -E "membership:|Membership:|etcd call" || true
  summary+=("\"$node\": {\"cpuPercent\": $cpu, \"seconds\": $elapsed}")
done
if [ -n "$json" ]; then
  (IFS=,; echo "{\"managers\": $managers, \"minutes\": $minutes, \"nodes\": {${summary[*]}}}") > "$json"
  echo "cluster-soak: summary written to $json"
fi
