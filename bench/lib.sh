# Shared by the bench scripts (bundle.sh, compress.sh, binary-compress.sh,
# linkwrapper.sh, manyobjects.sh). Source it after setting RUNS and making
# $tmp.

# measure CLEAN CMD...: runs CMD RUNS times, each after `rm -rf CLEAN`, a new
# empty folder $tmp/out and a sync; prints "median_seconds median_kib" (wall
# time, peak RSS from /usr/bin/time).
measure() {
  local clean=$1 i start end
  shift
  : > "$tmp/m"
  for ((i = 0; i < RUNS; i++)); do
    rm -rf "$clean" "$tmp/out"
    mkdir "$tmp/out"
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

secs() { awk -v s="$1" 'BEGIN { printf "%.2f", s }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
mibs() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# ratio A B [DIGITS]: B / A with DIGITS decimals (default 2).
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { printf "%.*f", d, b / a }'; }

# replace_section NAME TEXT: puts TEXT (which starts with
# "<!-- bench/NAME -->" and ends with "<!-- end bench/NAME -->") in place of
# that section of bench/RESULTS.md, or at its end; then prints it.
replace_section() {
  local name=$1 text=$2 out=bench/RESULTS.md
  local begin="<!-- bench/$name -->" end="<!-- end bench/$name -->"
  echo "$text" > "$tmp/section"
  if grep -qxF "$begin" "$out"; then
    awk -v new="$tmp/section" -v b="$begin" -v e="$end" '
      $0 == b { while ((getline line < new) > 0) print line; skip = 1; next }
      $0 == e { skip = 0; next }
      !skip' "$out" > "$tmp/results"
    cat "$tmp/results" > "$out"
  else
    printf '\n%s\n' "$text" >> "$out"
  fi
  echo "$text"
}

# one DIR CMD...: links once in DIR (a folder of $tmp) after a sync, appends "seconds kib" to
# DIR/m.
one() {
  local dir=$1 start end
  shift
  rm -f "$dir/prog"
  sync # the previous link's dirty pages are written back now, not during this one
  start=$EPOCHREALTIME
  (cd "$dir" && /usr/bin/time -f "%M" -o ../t "$@" > ../out 2>&1) || {
    echo "bench: in $dir: $*" >&2
    cat "$tmp/out" >&2
    exit 1
  }
  end=$EPOCHREALTIME
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') $(tail -1 "$tmp/t")" >> "$dir/m"
}
median() { awk -v c="$2" '{ print $c }' "$1" | sort -n | sed -n "$(((RUNS + 1) / 2))p"; }

# hip_kernels N [which]: prints a HIP source of N kernels calling a
# __device__ function of 16 sines and cosines (its LTO is the cost of a
# device link), and launch_all(float *p) launching every kernel, or with
# "which" launch_all(float *p, int which) launching kernel which.
hip_kernels() {
  local n=$1 which=${2:-} i
  echo '#include "hip.h"'
  echo '__device__ float f(float x, int i) { float s = 0; for (int j = 0; j < 16; j++) s += __builtin_sinf(x * j + i) * __builtin_cosf(x - j); return s; }'
  for ((i = 0; i < n; i++)); do
    echo "__global__ void k$i(float *p, int n) { for (int i = 0; i < n; i++) p[i] = f(p[i], $i) + f(p[(i + $i) % n], i) * $i.5f; }"
  done
  if [ -n "$which" ]; then
    echo 'extern "C" void launch_all(float *p, int which) {'
    for ((i = 0; i < n; i++)); do echo "  if (which == $i) k$i<<<1, 1>>>(p, 64);"; done
  else
    echo 'extern "C" void launch_all(float *p) {'
    for ((i = 0; i < n; i++)); do echo "  k$i<<<1, 1>>>(p, 64);"; done
  fi
  echo '}'
}
