#!/usr/bin/env bash
# Build liborbitkv.so, orbitkv.h and okv-tool with gcc from the sources and the SBE-generated C codecs.
#   build.sh MODULE_DIR TARGET_DIR CODECS_DIR
set -euo pipefail
module=$1 target=$2 codecs=$3
cflags="-std=c11 -O2 -g -Wall -Wextra -Werror"
mkdir -p "$target/lib" "$target/include" "$target/bin"
cp "$module/src/main/include/orbitkv.h" "$target/include/orbitkv.h"
gcc $cflags -fPIC -shared -fvisibility=default -I"$module/src/main/include" -I"$codecs" \
  -o "$target/lib/liborbitkv.so" "$module/src/main/c/orbitkv.c" "$module/src/main/c/state_key.c" -lpthread
gcc $cflags -I"$target/include" -o "$target/bin/okv-tool" "$module/src/tool/c/okv_tool.c" \
  -L"$target/lib" -lorbitkv -Wl,-rpath,'$ORIGIN/../lib' -lpthread
echo "built $target/lib/liborbitkv.so $target/include/orbitkv.h $target/bin/okv-tool"
