#!/usr/bin/env bash
# Writes an ELF object whose .llvm.offloading section is a 1 GiB file streamed
# by elfobj, and compares its time and peak memory with `cp` of the same file.
# Usage: bench/elfobj-stream.sh [SIZE_MIB]   (default 1024)
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-1024}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

head -c "$((mib << 20))" /dev/urandom > "$tmp/image.bin"
go build -o "$tmp/streamobj" ./bench/streamobj

# Drop the page cache's advantage for neither: both read a file that is now cached.
cat "$tmp/image.bin" > /dev/null
ours=$("$tmp/streamobj" -in "$tmp/image.bin" -o "$tmp/out.o")
start=$(date +%s.%N)
cp "$tmp/image.bin" "$tmp/copy.bin"
end=$(date +%s.%N)
cp_s=$(echo "$end - $start" | bc)
cp_rss=$( { /usr/bin/env time -f '%M' cp "$tmp/image.bin" "$tmp/copy2.bin"; } 2>&1 >/dev/null || echo "?")

read -r _ bytes _ secs _ rss <<<"$ours"
printf 'elfobj.Write, %d MiB section streamed from a file\n' "$mib"
printf '  %-10s %10s %14s\n' tool seconds peak_RSS_MiB
printf '  %-10s %10.3f %14.1f\n' elfobj "$secs" "$(echo "$rss / 1024" | bc -l)"
if [ "$cp_rss" != "?" ]; then
  printf '  %-10s %10.3f %14.1f\n' cp "$cp_s" "$(echo "$cp_rss / 1024" | bc -l)"
else
  printf '  %-10s %10.3f %14s\n' cp "$cp_s" "(no GNU time)"
fi
printf '  time ratio elfobj/cp: %.2f\n' "$(echo "$secs / $cp_s" | bc -l)"
size=$(stat -c %s "$tmp/out.o")
printf '  object: %d bytes (section %d bytes)\n' "$size" "$bytes"
if [ "$rss" -ge $((64 * 1024)) ]; then
  echo "FAIL: peak RSS ${rss} KiB is not under 64 MiB" >&2
  exit 1
fi
