#!/usr/bin/env bash
# Links an OpenMP program with SIZE_MIB (default 256) of device code through
# clang-22 twice, in one run: with goffload as its clang-linker-wrapper (a link
# of that name in the folder given to clang -B) and with clang-22's own wrapper
# (no -B), and prints the table for bench/RESULTS.md (it writes nothing there).
#
#   the program  bench's big.c, written below: a target region that reads the
#                size and first bytes of a blob that only the device code
#                holds (a declare variant for kind(nohost) whose asm .incbin's
#                a SIZE_MIB file), compiled by clang-22 -fopenmp
#                -fopenmp-targets=x86_64-pc-linux-gnu -fno-offload-lto, so
#                that the object carries the device code as an ELF image of
#                SIZE_MIB (checked with goffload list --json) and clang
#                compiles it in seconds
#   the link     clang-22 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu big.o
#                against libomptarget 22 and libomp: the wrapper links the
#                device image (clang-22 --target=x86_64-pc-linux-gnu, ld),
#                wraps it into the registration object and runs the host ld
#
# Both programs are run (OMP_TARGET_OFFLOAD=MANDATORY) and must print the same
# line, the blob's size and first bytes as read on the device. Each figure is
# the median of RUNS links (default 5; the two wrappers alternate): wall
# seconds of the whole clang command, and its peak RSS from /usr/bin/time,
# which is that of the largest process of the link (wait4's ru_maxrss covers
# the waited-for descendants: clang, the wrapper, the device clang and ld,
# the host ld) and not their sum. Each link runs after a sync, with the
# previous program removed.
#
# The runtime: /usr/lib/llvm-22/lib/libomptarget.so.22.* (Debian liboffload-22)
# and libomp.so.5 of LLVM 19 (libomp5-19), linked from a folder of links.
# BENCH_WRAPPER=/path/to/clang-linker-wrapper puts that program into the -B
# folder instead of goffload (a check of the bench itself).
# Usage: bench/linkwrapper.sh [SIZE_MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
mib=${1:-256}
clang=clang-22
for t in "$clang" /usr/bin/time go; do
  command -v "$t" >/dev/null || { echo "bench: $t is required" >&2; exit 1; }
done
omptarget=$(ls /usr/lib/llvm-22/lib/libomptarget.so.22.* 2>/dev/null | head -1)
libomp=""
for l in /usr/lib/llvm-19/lib/libomp.so.5 /usr/lib/x86_64-linux-gnu/libomp.so.5; do
  [ -e "$l" ] && { libomp=$l; break; }
done
[ -n "$omptarget" ] || { echo "bench: libomptarget 22 (/usr/lib/llvm-22/lib/libomptarget.so.22.*) is required" >&2; exit 1; }
[ -n "$libomp" ] || { echo "bench: libomp.so.5 (LLVM 19) is required" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. bench/lib.sh
go build -o "$tmp/goffload" ./cmd/goffload
g="$tmp/goffload"
mkdir "$tmp/bin" "$tmp/rt" "$tmp/ref" "$tmp/ours"
ln -s "${BENCH_WRAPPER:-$g}" "$tmp/bin/clang-linker-wrapper"
under_test=goffload label=goffload
[ -z "${BENCH_WRAPPER:-}" ] || under_test="$BENCH_WRAPPER (BENCH_WRAPPER)" label=BENCH_WRAPPER
for n in libomptarget.so "$(basename "$omptarget")"; do ln -s "$omptarget" "$tmp/rt/$n"; done
for n in libomp.so libomp.so.5; do ln -s "$libomp" "$tmp/rt/$n"; done

cat > "$tmp/big.c" << 'EOF'
/* A program with a big device image: only the device compilation (the
   variant for kind(nohost)) assembles the file blob into the device code;
   the target region reads the blob's size and first bytes. */
#include <stdio.h>
#pragma omp declare target
extern const char big_blob[] __attribute__((weak)), big_blob_end[] __attribute__((weak));
void big_holder(void) {}
#pragma omp end declare target
#pragma omp begin declare variant match(device = {kind(nohost)})
void big_holder(void) {
  __asm__ volatile(".pushsection .rodata.big,\"a\"\n.weak big_blob\nbig_blob:\n.incbin \"blob\"\n"
                   ".weak big_blob_end\nbig_blob_end:\n.popsection\n");
}
#pragma omp end declare variant
int main(void) {
  long size = 0;
  char head[9] = {0};
#pragma omp target map(from: size, head)
  {
    big_holder();
    size = big_blob_end - big_blob;
    for (int i = 0; i < 8; i++) head[i] = big_blob[i];
  }
  printf("device blob: %ld bytes, starting %s\n", size, head);
  return 0;
}
EOF
printf 'big-blob' > "$tmp/blob"
truncate -s "${mib}M" "$tmp/blob"
start=$EPOCHREALTIME
(cd "$tmp" && "$clang" -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -fno-offload-lto -c big.c -o big.o)
compile=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
rm "$tmp/blob"
image=$("$g" list --json "$tmp/big.o" | sed -n 's/^ *"image_size": \([0-9]*\),\{0,1\}$/\1/p')
[[ $image =~ ^[0-9]+$ ]] && ((image >= mib << 20)) || {
  echo "bench: the device image in big.o is not of ${mib} MiB: ${image:-none}" >&2
  exit 1
}

link=("$clang" -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu ../big.o -L../rt "-Wl,-rpath,$tmp/rt" -o prog)


for ((i = 0; i < RUNS; i++)); do
  one "$tmp/ref" "${link[@]}"
  one "$tmp/ours" "${link[0]}" -B "$tmp/bin" "${link[@]:1}"
done
want="device blob: $((mib << 20)) bytes, starting big-blob"
for d in ref ours; do
  got=$(cd "$tmp/$d" && OMP_TARGET_OFFLOAD=MANDATORY ./prog 2>&1) || { echo "bench: $d/prog: $got" >&2; exit 1; }
  [ "$got" = "$want" ] || { echo "bench: $d/prog printed \"$got\", want \"$want\"" >&2; exit 1; }
done
progsize=$(stat -c %s "$tmp/ours/prog")
refsize=$(stat -c %s "$tmp/ref/prog")
same="not the same bytes"
cmp -s "$tmp/ref/prog" "$tmp/ours/prog" && same="the same bytes (cmp)"

rs=$(median "$tmp/ref/m" 1)
rk=$(median "$tmp/ref/m" 2)
os=$(median "$tmp/ours/m" 1)
ok=$(median "$tmp/ours/m" 2)
version=$("$clang" --version | awk '/version/ { for (i = 1; i < NF; i++) if ($i == "version") { print $(i + 1); exit } }')

echo "<!-- bench/linkwrapper.sh -->"
echo "## Linking a program with ${mib} MiB of device code (OpenMP, x86-64 offload, clang-22)"
echo
echo "Made by \`bench/linkwrapper.sh\` on $(nproc) cores; Go $(go env GOVERSION); clang-22 $version; median of $RUNS links each, the two wrappers alternating, after a sync each. The program: one target region reading a ${mib} MiB blob that only the device code holds (asm \`.incbin\` in a \`declare variant\` for \`kind(nohost)\`), compiled in ${compile} s by \`clang-22 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -fno-offload-lto -c\` into an object whose device image is $image bytes (\`goffload list --json\`). The link: \`clang-22 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu big.o\` against libomptarget 22 and libomp 19, with $under_test as \`clang-linker-wrapper\` in the \`-B\` folder, and without \`-B\` (clang-22's own wrapper). Wall time of the whole clang command (process start-up included), and its peak RSS from \`/usr/bin/time\`: that of the largest process of the link (clang, the wrapper, the device link's clang and ld, the host ld), not their sum. Ratios: clang-22's wrapper's figure over $label's (above 1: $label is faster, or uses less memory)."
echo
echo "| link | clang-22's wrapper s | MiB | $label s | MiB | time ratio | memory ratio |"
echo "|---|---|---|---|---|---|---|"
echo "| \`clang-22 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu\` of ${mib} MiB of device code | $(awk -v s="$rs" 'BEGIN { printf "%.2f", s }') | $(mibs "$rk") | $(awk -v s="$os" 'BEGIN { printf "%.2f", s }') | $(mibs "$ok") | $(ratio "$os" "$rs") | $(ratio "$ok" "$rk") |"
echo
echo "Both programs ran on libomptarget 22's host device (OMP_TARGET_OFFLOAD=MANDATORY) and printed the same: \`$want\`. The programs are $refsize bytes (clang-22's wrapper) and $progsize bytes ($label): $same."
echo "<!-- end bench/linkwrapper.sh -->"
