#!/usr/bin/env bash
# Measures goffload against the LLVM tools doing the same work, in one run,
# and writes the table to bench/RESULTS.md (and prints it).
#
#   wrap      goffload wrap of one image vs llc-19 on the equivalent wrapper IR
#             (what clang-linker-wrapper spends on that step) vs cp of the image
#   package   goffload package vs clang-offload-packager-19
#   list      goffload list vs llvm-objdump-19 --offloading, archive of 200 fat objects
#   extract   goffload extract --raw vs clang-offload-packager-19, same archive
#
# Each figure is the median of RUNS runs (default 5): wall seconds and peak RSS
# (/usr/bin/time), each run after a sync so that no run pays for the writeback
# of the one before. Usage: bench/run.sh [SIZES_MIB...]  (default 1 64 512 2048)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 64 512 2048)
LLC_MAX_MIB=${LLC_MAX_MIB:-512} # above, the IR text (4 bytes a byte) is too large for llc

for t in llc-19 llvm-as-19 clang-offload-packager-19 llvm-objdump-19 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "bench: $t is required" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/goffload" ./cmd/goffload
g="$tmp/goffload"

# measure NAME CMD...: runs CMD RUNS times, prints "median_seconds median_kib".
measure() {
  local i out
  : > "$tmp/m"
  local start end
  for ((i = 0; i < RUNS; i++)); do
    sync # the previous run's dirty pages are written back now, not during this run
    start=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$tmp/t" "$@" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    end=$EPOCHREALTIME
    echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') $(cat "$tmp/t")" >> "$tmp/m"
  done
  local s k
  s=$(awk '{ print $1 }' "$tmp/m" | sort -n | sed -n "$(((RUNS + 1) / 2))p")
  k=$(awk '{ print $2 }' "$tmp/m" | sort -n | sed -n "$(((RUNS + 1) / 2))p")
  echo "$s $k"
}

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b / a }'; }

# The wrapper IR of LLVM 19 (spec §3.1) around an OffloadBinary file.
wrapper_ir() {
  local bin=$1 size imgoff imgsize
  size=$(stat -c %s "$bin")
  imgoff=$(od -An -t u8 -j 56 -N 8 "$bin" | tr -d ' ')
  imgsize=$(od -An -t u8 -j 64 -N 8 "$bin" | tr -d ' ')
  cat <<EOF
source_filename = "offload.wrapper.module"
target triple = "x86_64-unknown-linux-gnu"
%struct.__tgt_offload_entry = type { ptr, ptr, i64, i32, i32 }
%__tgt_device_image = type { ptr, ptr, ptr, ptr }
%__tgt_bin_desc = type { i32, ptr, ptr, ptr }
@__start_omp_offloading_entries = external hidden constant [0 x %struct.__tgt_offload_entry]
@__stop_omp_offloading_entries = external hidden constant [0 x %struct.__tgt_offload_entry]
@__dummy.omp_offloading_entries = internal constant [0 x %struct.__tgt_offload_entry] zeroinitializer, section "omp_offloading_entries"
@llvm.compiler.used = appending global [1 x ptr] [ptr @__dummy.omp_offloading_entries], section "llvm.metadata"
EOF
  printf '@.omp_offloading.device_image = internal unnamed_addr constant [%d x i8] c"' "$size"
  od -An -v -t x1 "$bin" | tr -d ' \n' | sed 's/../\\&/g'
  cat <<EOF
", section ".llvm.offloading", align 8
@.omp_offloading.device_images = internal unnamed_addr constant [1 x %__tgt_device_image] [%__tgt_device_image { ptr getelementptr ([$size x i8], ptr @.omp_offloading.device_image, i64 0, i64 $imgoff), ptr getelementptr ([$size x i8], ptr @.omp_offloading.device_image, i64 0, i64 $((imgoff + imgsize))), ptr @__start_omp_offloading_entries, ptr @__stop_omp_offloading_entries }]
@.omp_offloading.descriptor = internal constant %__tgt_bin_desc { i32 1, ptr @.omp_offloading.device_images, ptr @__start_omp_offloading_entries, ptr @__stop_omp_offloading_entries }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @.omp_offloading.descriptor_reg, ptr null }]
define internal void @.omp_offloading.descriptor_reg() section ".text.startup" {
entry:
  call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)
  %0 = call i32 @atexit(ptr @.omp_offloading.descriptor_unreg)
  ret void
}
declare void @__tgt_register_lib(ptr)
declare i32 @atexit(ptr)
define internal void @.omp_offloading.descriptor_unreg() section ".text.startup" {
entry:
  call void @__tgt_unregister_lib(ptr @.omp_offloading.descriptor)
  ret void
}
declare void @__tgt_unregister_lib(ptr)
EOF
}

out=bench/RESULTS.md
# bench/bundle.sh writes its own section; it is kept at the end.
kept=$(sed -n '/^<!-- bench\/bundle.sh -->$/,/^<!-- end bench\/bundle.sh -->$/p' "$out" 2>/dev/null || true)
{
  echo "# Benchmarks"
  echo
  echo "Made by \`bench/run.sh\` on $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB; Go $(go env GOVERSION); median of $RUNS runs each; seconds of wall time (bash's \`EPOCHREALTIME\` around the command, so process start-up included) and peak RSS in MiB (\`/usr/bin/time\`). Ratios: the LLVM tool's time over goffload's (above 1: goffload is faster), and goffload's over \`cp\`'s."
  echo
  echo "## Wrapping one image (OpenMP, LLVM 19, x86-64)"
  echo
  echo "| image MiB | goffload wrap s | MiB | llc-19 s | MiB | cp s | MiB | llc/goffload | goffload/cp |"
  echo "|---|---|---|---|---|---|---|---|---|"
} > "$out"

for s in "${sizes[@]}"; do
  head -c "$((s << 20))" /dev/urandom > "$tmp/img.o"
  "$g" package --llvm 19 -o "$tmp/img.bin" --image "file=$tmp/img.o,triple=x86_64-pc-linux-gnu,arch=,kind=openmp" > /dev/null
  read -r gs gk < <(measure "$g" wrap --llvm 19 -o "$tmp/w.o" "$tmp/img.bin")
  read -r cs ck < <(measure cp "$tmp/img.bin" "$tmp/copy.bin")
  if [ "$s" -le "$LLC_MAX_MIB" ]; then
    wrapper_ir "$tmp/img.bin" > "$tmp/w.ll"
    llvm-as-19 "$tmp/w.ll" -o "$tmp/w.bc"
    rm -f "$tmp/w.ll"
    read -r ls lk < <(measure llc-19 -filetype=obj -relocation-model=pic "$tmp/w.bc" -o "$tmp/llc.o")
    lcol="$ls | $(mib "$lk")"
    lr=$(ratio "$gs" "$ls")
    rm -f "$tmp/w.bc" "$tmp/llc.o"
  else
    lcol="— | —"
    lr="(IR too large)"
  fi
  echo "| $s | $gs | $(mib "$gk") | $lcol | $cs | $(mib "$ck") | $lr | $(awk -v a="$gs" -v b="$cs" 'BEGIN { printf "%.2f", a / b }') |" >> "$out"
  [ -n "${first:-}" ] || first="$s $gs $gk $cs"
  last="$s $gs $gk $cs"
  if [ "$s" = 512 ]; then goal512="$gs $cs ${ls:-} ${lk:-}"; fi
  maxk=$(( ${maxk:-0} > gk ? ${maxk:-0} : gk ))
  rm -f "$tmp/img.o" "$tmp/img.bin" "$tmp/w.o" "$tmp/copy.bin"
done

read -r s0 g0 k0 c0 <<< "$first"
read -r s1 g1 k1 c1 <<< "$last"
{
  echo
  echo "From $s0 MiB to $s1 MiB ($(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%g", b / a }') times the bytes), goffload's time grows $(awk -v a="$g0" -v b="$g1" 'BEGIN { printf "%.1f", b / a }') times (cp's $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", b / a }') times) and its peak memory $(awk -v a="$k0" -v b="$k1" 'BEGIN { printf "%.2f", b / a }') times: memory does not depend on the image size (at most $(mib "$maxk") MiB at any size)."
  if [ -n "${goal512:-}" ]; then
    read -r gg cc ll lk <<< "$goal512"
    echo
    echo "Goals at 512 MiB: at least 20 times faster than llc-19 (here $(ratio "$gg" "$ll")), within 1.5 times cp (here $(awk -v a="$gg" -v b="$cc" 'BEGIN { printf "%.2f", a / b }')), under 64 MiB at every size (here at most $(mib "$maxk") MiB). cp itself is $(ratio "$cc" "$ll") times faster than llc-19 here: no writer that copies the image can be more than that."
  fi
} >> "$out"

# Packaging, and listing and extracting from an archive of 200 fat objects
# of 5 MiB each (1 GiB in all).
head -c $((64 << 20)) /dev/urandom > "$tmp/p.o"
read -r gs gk < <(measure "$g" package --llvm 19 -o "$tmp/p1.bin" --image "file=$tmp/p.o,triple=x86_64-pc-linux-gnu,arch=,kind=openmp")
read -r ps pk < <(measure clang-offload-packager-19 -o "$tmp/p2.bin" --image="file=$tmp/p.o,triple=x86_64-pc-linux-gnu,arch=,kind=openmp")
cmp "$tmp/p1.bin" "$tmp/p2.bin"
rm -f "$tmp/p.o" "$tmp/p1.bin" "$tmp/p2.bin"

mkdir -p "$tmp/ar"
head -c $((5 << 20)) /dev/urandom > "$tmp/dev.o"
"$g" package --llvm 19 -o "$tmp/dev.bin" --image "file=$tmp/dev.o,triple=x86_64-pc-linux-gnu,arch=,kind=openmp" > /dev/null
"$g" embed -o "$tmp/fat.o" "$tmp/dev.bin" > /dev/null
for i in $(seq 1 200); do cp "$tmp/fat.o" "$tmp/ar/fat$i.o"; done
(cd "$tmp/ar" && ar rcs ../fat.a fat*.o)
rm -rf "$tmp/ar" "$tmp/dev.o" "$tmp/dev.bin"
arsize=$(stat -c %s "$tmp/fat.a")
read -r gl glk < <(measure "$g" list --llvm 19 "$tmp/fat.a")
read -r ol olk < <(measure llvm-objdump-19 --offloading "$tmp/fat.a")
mkdir -p "$tmp/x1" "$tmp/x2"
read -r ge gek < <(measure "$g" extract --llvm 19 --raw --kind openmp -o "$tmp/x1" "$tmp/fat.a")
read -r pe pek < <(measure bash -c "cd '$tmp/x2' && clang-offload-packager-19 '$tmp/fat.a' --image=kind=openmp")
diff -r "$tmp/x1" "$tmp/x2" > /dev/null

{
  echo
  echo "## Packaging, listing, extracting"
  echo
  echo "| work | goffload s | MiB | LLVM tool | s | MiB | tool/goffload |"
  echo "|---|---|---|---|---|---|---|"
  echo "| package a 64 MiB image | $gs | $(mib "$gk") | clang-offload-packager-19 | $ps | $(mib "$pk") | $(ratio "$gs" "$ps") |"
  echo "| list an archive of 200 fat objects ($((arsize >> 20)) MiB) | $gl | $(mib "$glk") | llvm-objdump-19 --offloading | $ol | $(mib "$olk") | $(ratio "$gl" "$ol") |"
  echo "| extract its 200 images | $ge | $(mib "$gek") | clang-offload-packager-19 | $pe | $(mib "$pek") | $(ratio "$ge" "$pe") |"
  echo
  echo "The packaged binaries are byte-identical (cmp), and so are the extracted files (diff -r)."
  [ -z "$kept" ] || printf '\n%s\n' "$kept"
} >> "$out"
cat "$out"
