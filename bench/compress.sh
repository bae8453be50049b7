#!/usr/bin/env bash
# Compresses and decompresses a HIP fatbin of a large code object with
# goffload and with clang-offload-bundler-22, in one run, and writes the table
# into its section of bench/RESULTS.md (and prints it).
#
#   the image     a code object of SIZE_MIB (default 512) made by bench/codeobj:
#                 semi-compressible (zstd -3 takes it to about a third), with
#                 copies of earlier stretches reaching back hundreds of MiB
#   compress      goffload wrap --kind hip --compress --image gfx90a=IMG (bundle,
#                 compress with zstd and wrap into the registration object: the
#                 work of clang-linker-wrapper --compress after the device link)
#                 vs clang-offload-bundler-22 -compress with the -targets that
#                 clang-linker-wrapper 22 passes (bundle and compress into a
#                 .hipfb); both at zstd level ${LEVEL:-3}, compressed bundle version 3
#   decompress    goffload extract --raw of the device code object vs
#                 clang-offload-bundler-22 -unbundle, from goffload's compressed
#                 fatbin (copied out of the object's .hip_fatbin) and from the
#                 bundler's; every output is compared with the image (cmp)
#
# Each figure is the median of RUNS runs (default 3): wall seconds and peak RSS
# (/usr/bin/time), each run after a sync, with the previous run's output
# removed first. Usage: bench/compress.sh [SIZE_MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
mib=${1:-512}
bundler=clang-offload-bundler-22
objcopy=llvm-objcopy-22
for t in "$bundler" "$objcopy" /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "bench: $t is required" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/goffload" ./cmd/goffload
go build -o "$tmp/codeobj" ./bench/codeobj
g="$tmp/goffload"

. bench/lib.sh


"$tmp/codeobj" -mib "$mib" > "$tmp/img.o"
# An AMDGPU code object header, so that goffload wrap --image takes the file.
printf '\177ELF\002\001\001\100\003\000\000\000\000\000\000\000\003\000\340\000' |
  dd of="$tmp/img.o" conv=notrunc status=none
level=${LEVEL:-3}
dev=hip-amdgcn-amd-amdhsa--gfx90a
# What clang-linker-wrapper 22 --compress runs (see its --dry-run).
bundle=("$bundler" -type=o -bundle-align=4096 -compress "-compression-level=$level"
  -targets=host-x86_64-unknown-linux-gnu,$dev -input=/dev/null -input="$tmp/img.o" -output="$tmp/x.hipfb")
wrap=("$g" wrap --kind hip --compress --compression-level "$level" --image "gfx90a=$tmp/img.o" -o "$tmp/w.o")

read -r gc gck < <(measure "$tmp/w.o" "${wrap[@]}")
read -r bc bck < <(measure "$tmp/x.hipfb" "${bundle[@]}")
"${wrap[@]}"
"${bundle[@]}"
"$objcopy" -O binary --only-section=.hip_fatbin "$tmp/w.o" "$tmp/g.hipfb"
gsize=$(stat -c %s "$tmp/g.hipfb")
bsize=$(stat -c %s "$tmp/x.hipfb")
# The two headers: the same fields but for the file size (bytes 8-15).
ghdr=$(od -An -tx1 -N32 "$tmp/g.hipfb" | tr -d ' \n')
bhdr=$(od -An -tx1 -N32 "$tmp/x.hipfb" | tr -d ' \n')
same_hdr=no
[ "${ghdr:0:16}${ghdr:32}" = "${bhdr:0:16}${bhdr:32}" ] && same_hdr=yes
# The zstd frames' windows (RFC 8878 §3.1.1.1.2), after the 32-byte header.
window() {
  local fhd wd
  read -r fhd wd < <(od -An -t u1 -j 36 -N 2 "$1")
  if (((fhd & 0x20) == 0)); then
    echo "$(((1 << (10 + (wd >> 3))) * (8 + (wd & 7)) / 8 >> 20)) MiB"
  else
    echo "the content size: single segment"
  fi
}
gwin=$(window "$tmp/g.hipfb")
bwin=$(window "$tmp/x.hipfb")

# The bundler's -unbundle of the device entry into $tmp/dev.o (-input= follows).
unbundle=("$bundler" -unbundle -type=o -targets=$dev -output="$tmp/dev.o")
read -r gdg gdgk < <(measure "$tmp/out" "$g" extract --raw -o "$tmp/out" "$tmp/g.hipfb")
cmp "$tmp/out/g-amdgcn-amd-amdhsa-gfx90a.0.o" "$tmp/img.o"
read -r gdo gdok < <(measure "$tmp/out" "$g" extract --raw -o "$tmp/out" "$tmp/w.o")
cmp "$tmp/out/w-amdgcn-amd-amdhsa-gfx90a.0.o" "$tmp/img.o"
read -r bdg bdgk < <(measure "$tmp/dev.o" "${unbundle[@]}" -input="$tmp/g.hipfb")
cmp "$tmp/dev.o" "$tmp/img.o"
read -r gdb gdbk < <(measure "$tmp/out" "$g" extract --raw -o "$tmp/out" "$tmp/x.hipfb")
cmp "$tmp/out/x-amdgcn-amd-amdhsa-gfx90a.0.o" "$tmp/img.o"
read -r bdb bdbk < <(measure "$tmp/dev.o" "${unbundle[@]}" -input="$tmp/x.hipfb")
cmp "$tmp/dev.o" "$tmp/img.o"

version=$("$bundler" --version | awk '/version/ { for (i = 1; i < NF; i++) if ($i == "version") { print $(i + 1); exit } }')
row() { # work, goffload s, kib, bundler's work, s, kib
  echo "| $1 | $(secs "$2") | $(mibs "$3") | $4 | $(secs "$5") | $(mibs "$6") | $(ratio "$2" "$5") | $(ratio "$3" "$6") |"
}
section=$(
  echo "<!-- bench/compress.sh -->"
  echo "## Compressing and decompressing a ${mib} MiB HIP fatbin"
  echo
  echo "Made by \`bench/compress.sh\` on $(nproc) cores; Go $(go env GOVERSION); $bundler $version; median of $RUNS runs each, wall time (process start-up included) and peak RSS (\`/usr/bin/time\`), each run after a sync. The image: a ${mib} MiB code object from \`bench/codeobj\` (semi-compressible, with copies of earlier stretches reaching back hundreds of MiB). Compressing: \`goffload wrap --kind hip --compress --compression-level $level --image gfx90a=IMG\` bundles it, compresses the fatbin (github.com/klauspost/compress/zstd) and writes the registration object; \`$bundler -compress -compression-level=$level\` with the \`-targets\` that clang-linker-wrapper 22 passes bundles and compresses it (libzstd, long-distance matching) into a .hipfb. Decompressing: \`goffload extract --raw\` and \`$bundler -unbundle\` of the device entry, from goffload's compressed fatbin (the object's \`.hip_fatbin\`, copied out with $objcopy, and the object itself) and from the bundler's. Ratios: the bundler's figure over goffload's (above 1: goffload is faster, or uses less memory)."
  echo
  echo "| work | goffload s | MiB | $bundler | s | MiB | time ratio | memory ratio |"
  echo "|---|---|---|---|---|---|---|---|"
  row "compress (zstd level $level, version 3)" "$gc" "$gck" "\`-compress\`" "$bc" "$bck"
  row "decompress goffload's fatbin" "$gdg" "$gdgk" "\`-unbundle\`" "$bdg" "$bdgk"
  row "decompress it from the object (\`.hip_fatbin\`)" "$gdo" "$gdok" "(the file)" "$bdg" "$bdgk"
  row "decompress the bundler's fatbin" "$gdb" "$gdbk" "\`-unbundle\`" "$bdb" "$bdbk"
  echo
  echo "Compressed sizes: goffload's fatbin $gsize bytes (zstd window $gwin), the bundler's $bsize bytes (window $bwin), $(ratio "$bsize" "$gsize") times the bundler's; the image is $((mib << 20)) bytes. The headers are the same but for the file size: $same_hdr. Every decompressed code object equals the image (cmp), the bundler's from goffload's fatbin too. goffload's memory is bounded by the zstd window (8 MiB in its own fatbins, 128 MiB in the bundler's) whatever the size; the bundler holds the whole bundle, compressed and not."
  echo "<!-- end bench/compress.sh -->"
)

replace_section compress.sh "$section"
