# Shared by scripts/orbitkv and scripts/test: locate the repository, a JDK >= 25, and the JVM flags.
# shellcheck shell=bash

ORBITKV_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ORBITKV_MIN_JAVA=25

java_major() {
  # Prints the feature version of the JDK at $1, or nothing. The JDK's release file says it without starting a JVM
  # (each start costs a CLI call ~0.1 s); a JDK without one is asked directly.
  local v=""
  if [ -f "$1/release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$1/release")
    [ "$v" = 1 ] && v=$(sed -n 's/^JAVA_VERSION="1\.\([0-9][0-9]*\).*/\1/p' "$1/release")
  fi
  [ -n "$v" ] || v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  [ -n "$v" ] && echo "${v%%.*}"
}

find_jdk() {
  # JAVA_HOME if it qualifies, else the newest qualifying JDK under /usr/lib/jvm.
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
    local m; m=$(java_major "$JAVA_HOME")
    if [ -n "$m" ] && [ "$m" -ge "$ORBITKV_MIN_JAVA" ]; then echo "$JAVA_HOME"; return 0; fi
  fi
  local best="" bestm=0 d m
  for d in /usr/lib/jvm/*; do
    [ -x "$d/bin/java" ] && [ -x "$d/bin/javac" ] || continue
    [ -L "$d" ] && continue
    m=$(java_major "$d")
    if [ -n "$m" ] && [ "$m" -ge "$ORBITKV_MIN_JAVA" ] && [ "$m" -gt "$bestm" ]; then best=$d; bestm=$m; fi
  done
  if [ -z "$best" ]; then
    echo "orbitkv: no JDK >= $ORBITKV_MIN_JAVA found (JAVA_HOME=${JAVA_HOME:-unset}, /usr/lib/jvm/*)." >&2
    echo "orbitkv: install one (e.g. Temurin 25) under /usr/lib/jvm or point JAVA_HOME at it." >&2
    return 1
  fi
  echo "$best"
}

jvm_flags() {
  # The one definition lives in the parent pom (property orbitkv.jvm.flags).
  sed -n 's:.*<orbitkv.jvm.flags>\(.*\)</orbitkv.jvm.flags>.*:\1:p' "$ORBITKV_ROOT/pom.xml"
}
