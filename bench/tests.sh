#!/usr/bin/env bash
# Times the README's test command: runs `go test -json ./...` (with the flags
# given, e.g. -count=1, which reruns what go test has cached) and prints the
# wall time of the whole run, each package's time and the 20 slowest tests
# (bench/testtimes), as Markdown for bench/RESULTS.md (it writes nothing there).
#
#   bench/tests.sh -count=1                         the default run
#   OFFLOAD_TEST_EXHAUSTIVE=1 bench/tests.sh -count=1 -timeout 60m   the exhaustive one
#   BUSY=2 bench/tests.sh -count=1                  with 2 CPU-bound processes beside it
#
# Its exit status is go test's.
set -uo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
busy=()
cleanup() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/testtimes" ./bench/testtimes || exit 1
for ((i = 0; i < ${BUSY:-0}; i++)); do
  yes > /dev/null &
  busy+=($!)
done
start=$EPOCHREALTIME
go test -json "$@" ./... > "$tmp/json"
code=$?
end=$EPOCHREALTIME
echo "go test -json $* ./... on $(nproc) cores$( [ "${BUSY:-0}" -gt 0 ] && echo ", ${BUSY} busy processes beside it")$( [ -n "${OFFLOAD_TEST_EXHAUSTIVE:-}" ] && echo ", OFFLOAD_TEST_EXHAUSTIVE=$OFFLOAD_TEST_EXHAUSTIVE"): exit $code, $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }') s of wall time; $(go version | cut -d' ' -f3)"
echo
"$tmp/testtimes" -n 20 < "$tmp/json"
grep -h '"Action":"fail"' "$tmp/json" | grep -o '"Test":"[^"]*"' | head -20 | sed 's/^/failed: /'
exit $code
