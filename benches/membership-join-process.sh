#!/usr/bin/env bash
# Join time of one Manager *process*: spawn -> "registered node" -> "member view complete" log lines, against an
# etcd from scripts/etcd, plus the same spawn -> "Manager running" for a standalone Manager as the anchor.
# Usage: benches/membership-join-process.sh ETCD_ENDPOINT [ROUNDS]   (run after a build: uses manager/target)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
E=$1; rounds=${2:-5}
JAVA_HOME=$(find_jdk)
cd "$ORBITKV_ROOT"
CP="$(ls manager/target/manager-*.jar | head -1):$(ls manager/target/lib/*.jar | tr '\n' :)"
read -r -a FLAGS <<<"$(jvm_flags)"
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
for i in $(seq 1 "$rounds"); do
  tag="joinp-$$-$i"; log=$(mktemp); reg=""; comp=""
  t0=$(date +%s%N)
  "$JAVA_HOME/bin/java" "${FLAGS[@]}" -Xmx256m -cp "$CP" io.orbitkv.manager.cli.OrbitKvCli manager \
    --dir "/dev/shm/$tag" --pool-bytes 8m --pool-pretouch=false \
    --etcd-endpoints "$E" --cluster-name "$tag" --node-id a --catalog-nodes a >"$log" 2>&1 &
  pid=$!
  while [ -z "$comp" ]; do
    [ -z "$reg" ] && grep -q "registered node" "$log" && reg=$(ms_since "$t0")
    grep -q "member view complete" "$log" && comp=$(ms_since "$t0")
    kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.005
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true
  t0=$(date +%s%N)
  "$JAVA_HOME/bin/java" "${FLAGS[@]}" -Xmx256m -cp "$CP" io.orbitkv.manager.cli.OrbitKvCli manager \
    --dir "/dev/shm/$tag-sa" --pool-bytes 8m --pool-pretouch=false >"$log.sa" 2>&1 &
  pid=$!
  until grep -q "Manager running" "$log.sa"; do sleep 0.005; done
  sa=$(ms_since "$t0")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  grep -o "([0-9]* etcd call(s) timed out" "$log" || true
  rm -f "$log" "$log.sa"; rm -rf "/dev/shm/$tag" "/dev/shm/$tag-sa"
  echo "round $i: registered ${reg} ms, complete view ${comp} ms; standalone Manager running ${sa} ms (load $(cut -d' ' -f1 /proc/loadavg))"
done
