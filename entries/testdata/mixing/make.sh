#!/usr/bin/env bash
# Makes the linked programs of mixing_test.go from prog.c with Debian's
# clang-14, clang-19 and clang-22, libomptarget 19 (libomp-19-dev) and 22
# (liboffload-22), and goffload (run from the module root's folder):
#   same19        clang-19 object linked by clang-19
#   m19by22.strip clang-19 object linked by clang-22, stripped
#   p22w22rt19    clang-22 object, LLVM 22 wrapper, linked against libomptarget 19
#   m14by19       clang-14 object linked by clang-19
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-O1 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu)
mkdir "$tmp/rt22"
ln -s /usr/lib/llvm-22/lib/libomptarget.so.22.1 "$tmp/rt22/libomptarget.so"
ln -s /usr/lib/llvm-19/lib/libomp.so.5 "$tmp/rt22/libomp.so"
for n in 14 19 22; do clang-$n "${flags[@]}" -c prog.c -o "$tmp/p$n.o"; done
clang-19 "${flags[@]}" "$tmp/p19.o" -o same19 -L/usr/lib/llvm-19/lib
clang-22 "${flags[@]}" "$tmp/p19.o" -o "$tmp/m19by22" -L"$tmp/rt22"
strip -o m19by22.strip "$tmp/m19by22"
(cd ../../.. && go run ./cmd/goffload link --llvm 22 --clang clang-22 --libdir /usr/lib/llvm-19/lib \
  -o entries/testdata/mixing/p22w22rt19 "$tmp/p22.o" >/dev/null)
clang-19 "${flags[@]}" "$tmp/p14.o" -o m14by19 -L/usr/lib/llvm-19/lib
