#!/usr/bin/env bash
# Regenerates the compressed bundles of this folder with the Debian bundlers of
# LLVM 19 (19.1.7) and 22 (22.1.8). The uncompressed fatbins are the
# .hip_fatbin sections of the HIP wrapper objects that clang-linker-wrapper 19
# and 22 made for the project's specification (offload/testdata/llvm/wrapper):
#   llvm-objcopy-19 -O binary --only-section=.hip_fatbin hip-wrapper-llvmN.o hip-fatbin-clang-linker-wrapper-llvmN.bundle
# Their gfx90a code object (4968 bytes, the LLVM 22 one) is the device input here.
# The *.zst files and zstd-vectors.txt come from the zstd command (1.5.4):
#   go test ./bundle -run TestZstdFrozenVectors -update
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The device entry of the LLVM 22 fatbin: offset 4096, 4968 bytes.
tail -c +4097 hip-fatbin-clang-linker-wrapper-llvm22.bundle > "$tmp/gfx90a.co"
clang-offload-bundler-19 -type=o -bundle-align=4096 -compress \
  -targets=host-x86_64-unknown-linux,hip-amdgcn-amd-amdhsa--gfx90a \
  -input=/dev/null -input="$tmp/gfx90a.co" -output=hip-fatbin-llvm19-zstd-v2.ccob
clang-offload-bundler-22 -type=o -bundle-align=4096 -compress \
  -targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a \
  -input=/dev/null -input="$tmp/gfx90a.co" -output=hip-fatbin-llvm22-zstd-v3.ccob
COMPRESSED_BUNDLE_FORMAT_VERSION=2 clang-offload-bundler-22 -type=o -bundle-align=4096 -compress \
  -compression-level=19 \
  -targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a \
  -input=/dev/null -input="$tmp/gfx90a.co" -output=hip-fatbin-llvm22-zstd19-v2.ccob
