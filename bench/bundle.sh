#!/usr/bin/env bash
# Lists and extracts a large zstd-compressed HIP bundle with goffload and with
# clang-offload-bundler-22, in one run, and writes the table into its section
# of bench/RESULTS.md (and prints it).
#
#   the bundle  a code object of SIZE_MIB (default 200) made by bench/codeobj,
#               bundled by clang-offload-bundler-22 -compress (zstd, level 3 or
#               $LEVEL, compressed bundle version 3) beside an empty host entry,
#               as a .hipfb file and wrapped by goffload wrap --kind hip into an
#               object (.hip_fatbin)
#   list        goffload list of the file and of the object vs the bundler's -list
#   extract     goffload extract --raw of the file and of the object vs the
#               bundler's -unbundle of the device entry; the files are compared
#
# Each figure is the median of RUNS runs (default 5): wall seconds and peak RSS
# (/usr/bin/time), each run after a sync, with the previous run's output
# removed first. Usage: bench/bundle.sh [SIZE_MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
mib=${1:-200}
bundler=clang-offload-bundler-22
for t in "$bundler" /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "bench: $t is required" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/goffload" ./cmd/goffload
go build -o "$tmp/codeobj" ./bench/codeobj
g="$tmp/goffload"

. bench/lib.sh


"$tmp/codeobj" -mib "$mib" > "$tmp/img.o"
level=()
[ -z "${LEVEL:-}" ] || level=("-compression-level=$LEVEL")
dev=hip-amdgcn-amd-amdhsa--gfx90a
"$bundler" -type=o -targets="host-x86_64-unknown-linux-gnu-,$dev" -input=/dev/null -input="$tmp/img.o" \
  -output="$tmp/x.hipfb" -compress "${level[@]}"
"$g" wrap --kind hip -o "$tmp/w.o" "$tmp/x.hipfb" > /dev/null
size=$(stat -c %s "$tmp/x.hipfb")
# The zstd frame's window (RFC 8878 §3.1.1.1.2), after the header (24 bytes
# in version 2, 32 in version 3) and the frame's magic.
version=$(od -An -t u2 -j 4 -N 2 "$tmp/x.hipfb" | tr -d ' ')
read -r fhd wd < <(od -An -t u1 -j $((version == 2 ? 28 : 36)) -N 2 "$tmp/x.hipfb")
if (((fhd & 0x20) == 0)); then
  window="$(((1 << (10 + (wd >> 3))) * (8 + (wd & 7)) / 8 >> 20)) MiB"
else
  window="single segment"
fi

read -r gl gk < <(measure "$tmp/none" "$g" list "$tmp/x.hipfb")
read -r gol gok < <(measure "$tmp/none" "$g" list "$tmp/w.o")
read -r bl bk < <(measure "$tmp/none" "$bundler" -list -type=o -input="$tmp/x.hipfb")
read -r ge gek < <(measure "$tmp/out" "$g" extract --raw -o "$tmp/out" "$tmp/x.hipfb")
cmp "$tmp/out/x-amdgcn-amd-amdhsa-gfx90a.0.o" "$tmp/img.o"
read -r goe goek < <(measure "$tmp/out" "$g" extract --raw -o "$tmp/out" "$tmp/w.o")
cmp "$tmp/out/w-amdgcn-amd-amdhsa-gfx90a.0.o" "$tmp/img.o"
read -r be bek < <(measure "$tmp/dev.o" "$bundler" -unbundle -type=o -input="$tmp/x.hipfb" -targets="$dev" -output="$tmp/dev.o")
cmp "$tmp/dev.o" "$tmp/img.o"

list_ok=no
awk -v a="$gl" -v b="$gol" -v k="$gk" -v l="$gok" 'BEGIN { exit !(a < 0.010 && b < 0.010 && k < 10240 && l < 10240) }' && list_ok=yes
extract_ok=no
awk -v a="$ge" -v b="$goe" -v c="$be" 'BEGIN { exit !(a <= c && b <= c) }' && extract_ok=yes

section=$(
  echo "<!-- bench/bundle.sh -->"
  echo "## A ${mib} MiB zstd-compressed HIP bundle"
  echo
  echo "Made by \`bench/bundle.sh\` on $(nproc) cores; Go $(go env GOVERSION); $bundler $("$bundler" --version | awk '/version/ { for (i = 1; i < NF; i++) if ($i == "version") { print $(i + 1); exit } }'); median of $RUNS runs each, wall time (process start-up included) and peak RSS (\`/usr/bin/time\`). The bundle: a ${mib} MiB code object from \`bench/codeobj\` and an empty host entry, bundled by \`$bundler -compress\` (zstd level ${LEVEL:-3}, window $window) into $((size >> 20)) MiB (compressed bundle version $version); the object: \`goffload wrap --kind hip\` of it. Ratios: the bundler's time over goffload's (above 1: goffload is faster)."
  echo
  echo "| work | goffload ms | MiB | $bundler | ms | MiB | bundler/goffload |"
  echo "|---|---|---|---|---|---|---|"
  echo "| list the .hipfb file | $(ms "$gl") | $(mibs "$gk") | \`-list\` | $(ms "$bl") | $(mibs "$bk") | $(ratio "$gl" "$bl" 1) |"
  echo "| list the object (\`.hip_fatbin\`) | $(ms "$gol") | $(mibs "$gok") | (the file) | $(ms "$bl") | $(mibs "$bk") | $(ratio "$gol" "$bl" 1) |"
  echo "| extract the device code object from the file (\`--raw\`) | $(ms "$ge") | $(mibs "$gek") | \`-unbundle\` | $(ms "$be") | $(mibs "$bek") | $(ratio "$ge" "$be" 1) |"
  echo "| extract it from the object | $(ms "$goe") | $(mibs "$goek") | (the file) | $(ms "$be") | $(mibs "$bek") | $(ratio "$goe" "$be" 1) |"
  echo
  echo "The extracted code objects equal the bundler's and the input (cmp). Goals: \`list\` under 10 ms and 10 MiB: $list_ok; \`extract\` at least as fast as the bundler: $extract_ok. \`list\` decompresses the bundle header only; \`extract\` streams the entry to its file with memory bounded by the zstd window ($window here: the bundler compresses large bundles with long-distance matching)."
  echo "<!-- end bench/bundle.sh -->"
)

replace_section bundle.sh "$section"
