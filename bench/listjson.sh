#!/usr/bin/env bash
# Times goffload list and list --json of an LLVM bitcode host object (clang
# -flto) whose llvm.embedded.objects lists 80,000 objects: GLOBALS (default
# 40,000) globals, each holding an OffloadBinary of clang-offload-packager-22
# (offload/testdata/llvm/packager/single-llvm22.bin), each listed LISTED
# (default 2) times, assembled by llvm-as-19. Both must grow with the input's
# size alone: list --json once looked up each image's binary among all
# binaries (16 s for such a file). Prints wall seconds (median of RUNS, default
# 3) and peak RSS, and the file's size; llvm-objdump refuses bitcode, and
# llvm-offload-binary-22 writes files, so no LLVM tool is timed beside it.
# GOFFLOAD=PATH times that goffload program instead of this tree's.
set -euo pipefail
cd "$(dirname "$0")/.."
GLOBALS=${GLOBALS:-40000}
LISTED=${LISTED:-2}
RUNS=${RUNS:-3}
command -v llvm-as-19 >/dev/null || { echo "bench: llvm-as-19 is required" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${GOFFLOAD:-}" ]; then cp "$GOFFLOAD" "$tmp/goffload"; else go build -o "$tmp/goffload" ./cmd/goffload; fi
bin=$(od -An -v -tx1 offload/testdata/llvm/packager/single-llvm22.bin | tr -s ' \n' ' ' | sed 's/ *$//; s/^ //; s/ /\\/g; s/^/\\/')
size=$(stat -c %s offload/testdata/llvm/packager/single-llvm22.bin)
{
  echo 'target triple = "x86_64-unknown-linux-gnu"'
  for ((i = 0; i < GLOBALS; i++)); do
    echo "@b$i = private constant [$size x i8] c\"$bin\", section \".llvm.offloading\", align 8"
  done
  echo -n '!llvm.embedded.objects = !{'
  for ((k = 0; k < LISTED; k++)); do
    for ((i = 0; i < GLOBALS; i++)); do
      [ "$k$i" = 00 ] || echo -n ', '
      echo -n "!$i"
    done
  done
  echo '}'
  for ((i = 0; i < GLOBALS; i++)); do
    echo "!$i = !{ptr @b$i, !\".llvm.offloading\"}"
  done
} > "$tmp/many.ll"
llvm-as-19 "$tmp/many.ll" -o "$tmp/many.o"
measure() {
  local i
  : > "$tmp/m"
  for ((i = 0; i < RUNS; i++)); do
    start=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$tmp/t" "$@" > "$tmp/out"
    end=$EPOCHREALTIME
    echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }') $(cat "$tmp/t")" >> "$tmp/m"
  done
  sort -n "$tmp/m" | awk -v n="$RUNS" 'NR == int((n + 1) / 2) { printf "%s s, %.1f MiB", $1, $2 / 1024 }'
}
images=$(grep -c "OFFLOADING IMAGE" < <("$tmp/goffload" list "$tmp/many.o"))
echo "bitcode of $(stat -c %s "$tmp/many.o") bytes, $images images ($GLOBALS globals listed $LISTED times each); $(go version | cut -d' ' -f3)"
echo "| command | time, peak RSS |"
echo "|---|---|"
echo "| goffload list | $(measure "$tmp/goffload" list "$tmp/many.o") |"
echo "| goffload list --json | $(measure "$tmp/goffload" list --json "$tmp/many.o") |"
