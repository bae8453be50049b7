#!/usr/bin/env bash
# Times PROGRAMS executables (default 20) linked through clang-22 from one
# -fgpu-rdc HIP library of KERNELS kernels (default 400) and PROGRAMS host
# objects, three ways in one run, and prints the table for bench/RESULTS.md
# (it writes nothing there):
#
#   clang-22     clang-22's own clang-linker-wrapper: every program's device
#                links (the LTO of both arches) run again
#   cold         goffload as clang-linker-wrapper (clang -B), its local cache
#                folder and a cache server both empty: the first program's
#                device links run and are uploaded; the other programs, on
#                the same device code, are hits in the folder
#   2nd machine  goffload with another, empty, local folder and the server
#                warm: the first program's device links come from the
#                server, the others from the folder
#
# The server is Debian's nginx with its WebDAV module as a Bazel HTTP cache
# ($OFFLOAD_NGINX, nginx on $PATH, or /usr/sbin/nginx), on 127.0.0.1. Every
# program goffload links must be the same bytes as clang-22's own link of it
# (cmp), and the second machine's links must all be cache hits.
# Usage: bench/cacheserver.sh [PROGRAMS [KERNELS]]
set -euo pipefail
cd "$(dirname "$0")/.."
programs=${1:-20}
kernels=${2:-400}
clang=clang-22
nginx=${OFFLOAD_NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
for t in "$clang" ld.lld-22 llvm-ar-22 go "$nginx"; do
  command -v "$t" >/dev/null || { echo "bench: $t is required" >&2; exit 1; }
done

tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. bench/lib.sh
go build -o "$tmp/goffload" ./cmd/goffload
mkdir "$tmp/bin" "$tmp/srv" "$tmp/srv/data"
ln -s "$tmp/goffload" "$tmp/bin/clang-linker-wrapper"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$tmp/srv/nginx.conf" <<EOF
daemon off; master_process off; worker_processes 1;
pid $tmp/srv/nginx.pid; error_log $tmp/srv/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $tmp/srv/body; proxy_temp_path $tmp/srv/proxy; fastcgi_temp_path $tmp/srv/fcgi;
  uwsgi_temp_path $tmp/srv/uwsgi; scgi_temp_path $tmp/srv/scgi;
  server { listen 127.0.0.1:$port; root $tmp/srv/data; client_max_body_size 0;
    location / { dav_methods PUT; create_full_put_path on; dav_access user:rw; } }
}
EOF
"$nginx" -c "$tmp/srv/nginx.conf" -p "$tmp/srv" -e "$tmp/srv/error.log" &
pid=$!
for ((i = 0; i < 100; i++)); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null && break
  sleep 0.1
done
server="http://127.0.0.1:$port/team"

cp cmd/goffload/testdata/wrapperhip/hip.h "$tmp/"
"$clang" -shared -fPIC -o "$tmp/libamdhip64.so" wrap/testdata/gpu/runtime.c -ldl
hip_kernels "$kernels" which > "$tmp/kernels.hip"
arches=(--offload-arch=gfx90a --offload-arch=gfx1100)
(cd "$tmp" && "$clang" -x hip --offload-new-driver "${arches[@]}" -nogpulib -nogpuinc -fgpu-rdc -O3 -c kernels.hip -o kernels.o &&
  llvm-ar-22 rcs libkernels.a kernels.o)
for ((p = 0; p < programs; p++)); do
  printf 'void launch_all(float *, int);\nint main(void) { float v[64] = {%d}; launch_all(v, %d); return 0; }\n' "$p" "$p" > "$tmp/test$p.c"
  (cd "$tmp" && "$clang" -c "test$p.c" -o "test$p.o")
done
# links DIR [-B BIN]: links every program in DIR; prints the wall seconds.
links() {
  local dir=$1 start p
  shift
  mkdir -p "$tmp/$dir"
  sync
  start=$EPOCHREALTIME
  for ((p = 0; p < programs; p++)); do
    (cd "$tmp/$dir" && "$clang" "$@" --hip-link --offload-new-driver "${arches[@]}" -nogpulib -fgpu-rdc -O3 \
      "../test$p.o" -L.. -lkernels "-Wl,-rpath,$tmp" -Wl,--wrapper-verbose -o "test$p" > "test$p.log" 2>&1) ||
      { cat "$tmp/$dir/test$p.log" >&2; exit 1; }
  done
  awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'
}
ref=$(links clang)
cold=$(GOFFLOAD_CACHE=$server GOFFLOAD_CACHE_DIR=$tmp/cacheA links cold -B "$tmp/bin")
second=$(GOFFLOAD_CACHE=$server GOFFLOAD_CACHE_DIR=$tmp/cacheB links second -B "$tmp/bin")
for ((p = 0; p < programs; p++)); do
  for d in cold second; do
    cmp -s "$tmp/clang/test$p" "$tmp/$d/test$p" || { echo "bench: $d/test$p is not clang-22's program" >&2; exit 1; }
  done
done
count() { cat "$tmp/$1"/test*.log | grep -c "^# goffload: cache $2 device-link" || true; }
[ "$(count second miss)" = 0 ] || { echo "bench: the second machine missed $(count second miss) device links" >&2; exit 1; }
coldmiss=$(count cold miss)
blobs=$(find "$tmp/srv/data/team/cas" -type f | wc -l)
version=$("$clang" --version | awk '/version/ { for (i = 1; i < NF; i++) if ($i == "version") { print $(i + 1); exit } }')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b / a }'; }

echo "<!-- bench/cacheserver.sh -->"
echo "## Many programs on one device library, on two machines (the cache server, clang-22)"
echo
echo "Made by \`bench/cacheserver.sh $programs $kernels\` on $(nproc) cores; Go $(go env GOVERSION); clang-22 $version; $("$nginx" -v 2>&1 | sed 's/.*version: //') with WebDAV as the cache server, on the same machine. $programs programs, each a \`main\` of its own, linked by \`clang-22 --hip-link --offload-new-driver -fgpu-rdc -O3\` (gfx90a and gfx1100) against one \`-fgpu-rdc\` library of $kernels kernels (bitcode: each program's device link is the LTO of the library for each arch). *clang-22*: its own wrapper. *Cold*: goffload as \`clang-linker-wrapper\` (\`-B\`), \`GOFFLOAD_CACHE=http://127.0.0.1:PORT/team\`, an empty local folder and an empty server: $coldmiss device links ran (the first program's), and were uploaded ($blobs blobs); the other programs took them from the folder. *Second machine*: another empty folder, the server warm: every device link a hit, the first program's from the server. Every program was clang-22's own, byte for byte (cmp). Wall seconds of the $programs links together."
echo
echo "| $programs links | s | time ratio (clang-22's over this) |"
echo "|---|---|---|"
echo "| clang-22's wrapper | $ref | 1.0 |"
echo "| goffload, cold (empty folder, empty server) | $cold | $(ratio "$cold" "$ref") |"
echo "| goffload, second machine (empty folder, warm server) | $second | $(ratio "$second" "$ref") |"
echo "<!-- end bench/cacheserver.sh -->"
