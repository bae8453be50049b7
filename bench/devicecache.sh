#!/usr/bin/env bash
# Times the cold link and the host-only relink of a HIP program of KERNELS
# kernels (default 400) through clang-22, in one run: with goffload as its
# clang-linker-wrapper (a link of that name in the folder given to clang -B),
# its cache of device links on (GOFFLOAD_CACHE, a folder of the bench's), and
# with clang-22's own wrapper (no -B); prints the table for bench/RESULTS.md
# (it writes nothing there).
#
#   the program  kernels.hip, written below: KERNELS kernels calling a
#                __device__ function of 16 sines and cosines, compiled by
#                clang-22 -x hip --offload-new-driver -fgpu-rdc -O3
#                --offload-arch=gfx90a --offload-arch=gfx1100 -nogpulib
#                -nogpuinc (the objects carry bitcode: the device link is a
#                whole-program LTO of each arch); main.c, the host code
#   the link     clang-22 --hip-link --offload-new-driver -fgpu-rdc -O3 with
#                both arches, against a stand-in libamdhip64.so
#                (wrap/testdata/gpu/runtime.c): no GPU is needed to link
#   cold         goffload with an empty cache (cleared before each run);
#                clang-22's wrapper
#   known tools  goffload with no entry but the tools' hashes remembered
#                (a program linked for the first time on a machine that
#                has linked before), against clang-22's cold figure
#   relink       after a change to main.c only (main.o compiled again):
#                goffload's cache holds both device links, clang-22's
#                wrapper links them again
#
# Each figure is the median of RUNS links (default 3), the two wrappers
# alternating, after a sync each: wall seconds of the whole clang command and
# its peak RSS (/usr/bin/time: the largest process of the link). The relinked
# programs of the two wrappers must be the same bytes, and goffload's relink
# must report both device links as cache hits.
# Usage: bench/devicecache.sh [KERNELS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
kernels=${1:-400}
clang=clang-22
for t in "$clang" ld.lld-22 /usr/bin/time go; do
  command -v "$t" >/dev/null || { echo "bench: $t is required" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. bench/lib.sh
go build -o "$tmp/goffload" ./cmd/goffload
mkdir "$tmp/bin"
ln -s "$tmp/goffload" "$tmp/bin/clang-linker-wrapper"
export GOFFLOAD_CACHE="$tmp/cache"
cp cmd/goffload/testdata/wrapperhip/hip.h "$tmp/"
"$clang" -shared -fPIC -o "$tmp/libamdhip64.so" wrap/testdata/gpu/runtime.c -ldl

hip_kernels "$kernels" > "$tmp/kernels.hip"
arches=(--offload-arch=gfx90a --offload-arch=gfx1100)
start=$EPOCHREALTIME
(cd "$tmp" && "$clang" -x hip --offload-new-driver "${arches[@]}" -nogpulib -nogpuinc -fgpu-rdc -O3 -c kernels.hip -o kernels.o)
compile=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
# host N: main.o of the N-th version of the host code.
host() {
  printf 'void launch_all(float *);\nint main(void) { float p[64] = {%d}; launch_all(p); return 0; }\n' "$1" > "$tmp/main.c"
  (cd "$tmp" && "$clang" -c main.c -o main.o)
}
host 0
link=("$clang" --hip-link --offload-new-driver "${arches[@]}" -nogpulib -fgpu-rdc -O3 ../kernels.o ../main.o -L.. "-Wl,-rpath,$tmp" -o prog)
for d in ours_cold ref_cold ours_known ours_relink ref_relink; do mkdir "$tmp/$d"; done

for ((i = 0; i < RUNS; i++)); do
  host $((2 * i))
  rm -rf "$GOFFLOAD_CACHE"
  one "$tmp/ours_cold" "${link[0]}" -B "$tmp/bin" "${link[@]:1}"
  one "$tmp/ref_cold" "${link[@]}"
  # No entry, but the tools' hashes remembered: a program linked for the
  # first time on a machine that has linked before.
  rm -rf "$GOFFLOAD_CACHE/link-v1"
  one "$tmp/ours_known" "${link[0]}" -B "$tmp/bin" "${link[@]:1}"
  host $((2 * i + 1)) # the host code only
  one "$tmp/ours_relink" "${link[0]}" -B "$tmp/bin" "${link[@]:1}"
  one "$tmp/ref_relink" "${link[@]}"
done
hits=$(cd "$tmp/ours_relink" && "${link[0]}" -B "$tmp/bin" "${link[@]:1}" -Wl,--wrapper-verbose 2>&1 | grep -c '^# goffload: cache hit device-link' || true)
[ "$hits" = 2 ] || { echo "bench: goffload's relink reports $hits cache hits, want 2" >&2; exit 1; }
cmp -s "$tmp/ref_relink/prog" "$tmp/ours_relink/prog" || { echo "bench: the relinked programs differ" >&2; exit 1; }
cold_same="not the same bytes"
cmp -s "$tmp/ref_cold/prog" "$tmp/ours_cold/prog" && cold_same="the same bytes"
entries=$("$tmp/goffload" cache stats --json | sed -n 's/^ *"bytes": \([0-9]*\),\{0,1\}$/\1/p')

row() { # label dir-of-clang dir-of-goffload
  local rs rk os ok
  rs=$(median "$tmp/$2/m" 1) rk=$(median "$tmp/$2/m" 2) os=$(median "$tmp/$3/m" 1) ok=$(median "$tmp/$3/m" 2)
  echo "| $1 | $(secs "$rs") | $(mibs "$rk") | $(secs "$os") | $(mibs "$ok") | $(ratio "$os" "$rs" 1) | $(ratio "$ok" "$rk") |"
}
version=$("$clang" --version | awk '/version/ { for (i = 1; i < NF; i++) if ($i == "version") { print $(i + 1); exit } }')

echo "<!-- bench/devicecache.sh -->"
echo "## Relinking a HIP program after a change to host code (the device-link cache, clang-22)"
echo
echo "Made by \`bench/devicecache.sh $kernels\` on $(nproc) cores; Go $(go env GOVERSION); clang-22 $version; median of $RUNS links each, the two wrappers alternating, after a sync each. The program: $kernels kernels calling a \`__device__\` function of sines and cosines, compiled in ${compile} s by \`clang-22 -x hip --offload-new-driver -fgpu-rdc -O3 --offload-arch=gfx90a --offload-arch=gfx1100 -nogpulib -nogpuinc -c\` (bitcode: the device link is the LTO of each arch), and a \`main.c\` of host code. The link: \`clang-22 --hip-link --offload-new-driver -fgpu-rdc -O3\` with both arches against a stand-in \`libamdhip64.so\`, with goffload as \`clang-linker-wrapper\` in the \`-B\` folder and its cache on (\`GOFFLOAD_CACHE\`), and without \`-B\` (clang-22's own wrapper). *Cold*: goffload's cache empty, the remembered hashes of the tools' files too. *Known tools*: no entry, but those hashes remembered (a new program on a machine that has linked before), beside clang-22's cold link. *Relink*: \`main.o\` compiled again from changed host code; goffload's cache holds the two device links ($entries bytes), clang-22's wrapper links them again. Wall time of the whole clang command, and its peak RSS from \`/usr/bin/time\`. Ratios: clang-22's wrapper's figure over goffload's."
echo
echo "| link | clang-22's wrapper s | MiB | goffload s | MiB | time ratio | memory ratio |"
echo "|---|---|---|---|---|---|---|"
row "cold (goffload's cache empty)" ref_cold ours_cold
row "cold, the tools' hashes remembered" ref_cold ours_known
row "relink after a change to host code" ref_relink ours_relink
echo
echo "goffload's relink reported both device links as cache hits (\`-Wl,--wrapper-verbose\`: \`# goffload: cache hit device-link ...\`) and its program was the same bytes as clang-22's wrapper's (cmp); the cold links' programs were $cold_same."
echo "<!-- end bench/devicecache.sh -->"
