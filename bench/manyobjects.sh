#!/usr/bin/env bash
# Links an OpenMP program of OBJECTS objects (default 1000) and LIBS static
# libraries (default 50) through clang-22, in one run: with goffload as its
# clang-linker-wrapper (a link of that name in the folder given to clang -B)
# and with clang-22's own wrapper (no -B), and prints the table for
# bench/RESULTS.md (it writes nothing there).
#
#   the program  f0.c … f999.c, each a function with one small target region
#                (it adds its own number to a mapped variable); LIBS
#                libraries of MEMBERS members (default 4) of the same shape,
#                of which main calls the first half; main.c calls every fN
#                and prints the sum. Each file is compiled by clang-22
#                -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -c, the
#                libraries made by llvm-ar-22.
#   the link     clang-22 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu
#                main.o f*.o -L lib -l0 … -l49 against libomptarget 22 and
#                libomp: the wrapper gathers the device code of every object
#                and of the library members its release's rule takes, links
#                it (clang-22 --target=x86_64-pc-linux-gnu, ld), wraps it
#                into the registration object and runs the host ld.
#
# Both programs are run (OMP_TARGET_OFFLOAD=MANDATORY) and must print the sum
# that the sources imply. Each figure is the median of RUNS links (default 5;
# the two wrappers alternate): wall seconds of the whole clang command, and
# its peak RSS from /usr/bin/time, which is that of the largest process of the
# link (wait4's ru_maxrss covers the waited-for descendants), not their sum.
# Each link runs after a sync, with the previous program removed. Then one
# link of each, with --wrapper-verbose timings (-Wl,--wrapper-time-trace is
# not used: goffload has none), splits the time: the device link's clang
# command is run alone, as each wrapper printed it.
#
# The runtime: /usr/lib/llvm-22/lib/libomptarget.so.22.* (Debian liboffload-22)
# and libomp.so.5 of LLVM 19 (libomp5-19), linked from a folder of links.
# BENCH_WRAPPER=/path/to/clang-linker-wrapper puts that program into the -B
# folder instead of goffload (a check of the bench itself).
# BENCH_KEEP=1 keeps the folder of sources, objects and programs (its name
# goes to standard error).
# Usage: bench/manyobjects.sh [OBJECTS [LIBS]]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
objects=${1:-1000}
libs=${2:-50}
members=${MEMBERS:-4}
clang=clang-22
for t in "$clang" llvm-ar-22 /usr/bin/time go; do
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
if [ -n "${BENCH_KEEP:-}" ]; then
  echo "bench: keeping $tmp" >&2
else
  trap 'rm -rf "$tmp"' EXIT
fi
. bench/lib.sh
go build -o "$tmp/goffload" ./cmd/goffload
g="$tmp/goffload"
mkdir "$tmp/bin" "$tmp/rt" "$tmp/ref" "$tmp/ours" "$tmp/src" "$tmp/o" "$tmp/lib"
ln -s "${BENCH_WRAPPER:-$g}" "$tmp/bin/clang-linker-wrapper"
under_test=goffload label=goffload
[ -z "${BENCH_WRAPPER:-}" ] || under_test="$BENCH_WRAPPER (BENCH_WRAPPER)" label=BENCH_WRAPPER
for n in libomptarget.so "$(basename "$omptarget")"; do ln -s "$omptarget" "$tmp/rt/$n"; done
for n in libomp.so libomp.so.5; do ln -s "$libomp" "$tmp/rt/$n"; done

# fn NAME NUMBER: a function NAME whose target region adds NUMBER.
fn() {
  printf 'int %s(int x) {\n  int y = x;\n#pragma omp target map(tofrom: y)\n  y += %d;\n  return y;\n}\n' "$1" "$2"
}
want=0
{
  echo '#include <stdio.h>'
  for ((i = 0; i < objects; i++)); do echo "int f$i(int);"; done
  for ((l = 0; l < libs; l++)); do
    for ((m = 0; m < members / 2; m++)); do echo "int l${l}_$m(int);"; done
  done
  echo 'int main(void) {'
  echo '  long sum = 0;'
  for ((i = 0; i < objects; i++)); do echo "  sum += f$i(0);"; want=$((want + i)); done
  for ((l = 0; l < libs; l++)); do
    for ((m = 0; m < members / 2; m++)); do echo "  sum += l${l}_$m(0);"; want=$((want + 100000 + l * members + m)); done
  done
  echo '  printf("sum %ld\n", sum);'
  echo '  return 0;'
  echo '}'
} > "$tmp/src/main.c"
for ((i = 0; i < objects; i++)); do fn "f$i" "$i" > "$tmp/src/f$i.c"; done
for ((l = 0; l < libs; l++)); do
  for ((m = 0; m < members; m++)); do fn "l${l}_$m" $((100000 + l * members + m)) > "$tmp/src/l${l}_$m.c"; done
done

start=$EPOCHREALTIME
(cd "$tmp/src" && ls ./*.c | xargs -P "$(nproc)" -n 16 sh -c '
  for f; do '"$clang"' -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -c "$f" -o "../o/$(basename "$f" .c).o" || exit 255; done' sh)
for ((l = 0; l < libs; l++)); do
  ms=()
  for ((m = 0; m < members; m++)); do ms+=("$tmp/o/l${l}_$m.o"); done
  llvm-ar-22 rcs "$tmp/lib/lib$l.a" "${ms[@]}"
  rm "${ms[@]}"
done
compile=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
images=$("$g" list --json "$tmp/o/f0.o" | grep -c '"image_size"')
[ "$images" = 1 ] || { echo "bench: f0.o holds $images device images, want 1" >&2; exit 1; }

objs=(../o/main.o)
for ((i = 0; i < objects; i++)); do objs+=("../o/f$i.o"); done
ls=()
for ((l = 0; l < libs; l++)); do ls+=("-l$l"); done
link=("$clang" -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu "${objs[@]}" -L../lib "${ls[@]}" -L../rt "-Wl,-rpath,$tmp/rt" -o prog)


for ((i = 0; i < RUNS; i++)); do
  one "$tmp/ref" "${link[@]}"
  one "$tmp/ours" "${link[0]}" -B "$tmp/bin" "${link[@]:1}"
done
wantline="sum $want"
for d in ref ours; do
  got=$(cd "$tmp/$d" && OMP_TARGET_OFFLOAD=MANDATORY ./prog 2>&1) || { echo "bench: $d/prog: $got" >&2; exit 1; }
  [ "$got" = "$wantline" ] || { echo "bench: $d/prog printed \"$got\", want \"$wantline\"" >&2; exit 1; }
done
same="not the same bytes"
cmp -s "$tmp/ref/prog" "$tmp/ours/prog" && same="the same bytes (cmp)"

# What both wrappers pay, timed apart (median of RUNS each): the device
# link and the host link, as clang-22's wrapper printed them
# (--wrapper-verbose, with -save-temps so that its device images stay), and
# writing that many small files into a new folder (cp of the device images
# the wrapper wrote), which each wrapper does before its device link.
(cd "$tmp/ref" && "${link[@]}" -Wl,--wrapper-verbose -save-temps > ../verbose 2>&1)
dev=$(grep -m1 -- '--target=x86_64-pc-linux-gnu' "$tmp/verbose" | grep -v 'clang-linker-wrapper' || true)
host=$(grep -m1 -- ' -o prog ' "$tmp/verbose" | grep -v -- '--target=' || true)
[ -n "$dev" ] && [ -n "$host" ] || { echo "bench: no device or host link in clang-22's wrapper's --wrapper-verbose" >&2; exit 1; }
nimages=$(find "$tmp/ref" -maxdepth 1 -name '*-x86_64-pc-linux-gnu-*.o' | wc -l)
# alone CMD: runs the shell words CMD in ref RUNS times, prints the median seconds.
alone() {
  : > "$tmp/am"
  for ((i = 0; i < RUNS; i++)); do
    rm -rf "$tmp/copies"
    sync
    start=$EPOCHREALTIME
    (cd "$tmp/ref" && eval "$1" > /dev/null 2>&1) || { echo "bench: alone, failed: $1" >&2; exit 1; }
    awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f\n", b - a }' >> "$tmp/am"
  done
  sort -n "$tmp/am" | sed -n "$(((RUNS + 1) / 2))p" | awk '{ printf "%.2f", $1 }'
}
devs=$(alone "$dev")
hosts=$(alone "$host")
files=$(alone "mkdir ../copies && cp ./*-x86_64-pc-linux-gnu-*.o ../copies/")

rs=$(median "$tmp/ref/m" 1)
rk=$(median "$tmp/ref/m" 2)
os=$(median "$tmp/ours/m" 1)
ok=$(median "$tmp/ours/m" 2)
version=$("$clang" --version | awk '/version/ { for (i = 1; i < NF; i++) if ($i == "version") { print $(i + 1); exit } }')
progsize=$(stat -c %s "$tmp/ours/prog")

echo "<!-- bench/manyobjects.sh -->"
echo "## Linking a program of $objects objects and $libs static libraries (OpenMP, x86-64 offload, clang-22)"
echo
echo "Made by \`bench/manyobjects.sh\` on $(nproc) cores; Go $(go env GOVERSION); clang-22 $version; median of $RUNS links each, the two wrappers alternating, after a sync each. The program: $objects objects, each a function with one small target region, and $libs static libraries (\`llvm-ar-22\`) of $members such members, half of them called from \`main.o\`; $((objects + 1 + libs * members)) files compiled in $compile s by \`clang-22 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -c\`. The link: \`clang-22 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu main.o f*.o -L lib -l0 … -l$((libs - 1))\` against libomptarget 22 and libomp 19, with $under_test as \`clang-linker-wrapper\` in the \`-B\` folder, and without \`-B\` (clang-22's own wrapper). Wall time of the whole clang command (process start-up included), and its peak RSS from \`/usr/bin/time\`: that of the largest process of the link, not their sum. Ratios: clang-22's wrapper's figure over $label's (above 1: $label is faster, or uses less memory)."
echo
echo "| link | clang-22's wrapper s | MiB | $label s | MiB | time ratio | memory ratio |"
echo "|---|---|---|---|---|---|---|"
echo "| $objects objects, $libs libraries | $(secs "$rs") | $(mibs "$rk") | $(secs "$os") | $(mibs "$ok") | $(ratio "$os" "$rs") | $(ratio "$ok" "$rk") |"
echo
echo "Both programs ran on libomptarget 22's host device (OMP_TARGET_OFFLOAD=MANDATORY) and printed the same: \`$wantline\`. The programs ($progsize bytes) are $same. "
echo
echo "What both wrappers pay, each run by itself (median of $RUNS): the device link (the \`clang-22 --target=x86_64-pc-linux-gnu\` command of clang-22's wrapper, over its $nimages device images) $devs s; the host link (its \`ld\` command) $hosts s; writing $nimages small files into a new folder (\`cp\` of those images) $files s. Their sum, $(awk -v a="$devs" -v b="$hosts" -v c="$files" 'BEGIN { printf "%.2f", a + b + c }') s, bounds what either wrapper can take: at most $(awk -v a="$devs" -v b="$hosts" -v c="$files" -v r="$rs" 'BEGIN { printf "%.2f", r / (a + b + c) }') times faster than clang-22's wrapper here."
echo "<!-- end bench/manyobjects.sh -->"
