#!/usr/bin/env bash
# The CUDA backend's GPU checks in one prepared run (issue 9), within 8 minutes on an H200.
#   tests/gpu/device_checks.sh RESULTS_DIR
# Steps: configure and build for sm_90 only (no store, no HTTP, no GUI; carried dependencies from
# .carry/, made beforehand by tests/gpu/prepare_carry.sh), the ctest label `gpu` (kernels, stories260K,
# every architecture against the CPU and llama.cpp, image prompts), then
# `modebench-cli bench` on synthetic llama-3.2-1b and llama-3-8b at f16, q8_0 and q4_0 (2048-token
# prefill, graphs on), and fast-versus-regular `compare` at concurrency 1 and 32. Every step has
# its own time limit and the whole run a budget; a step that fails, times out or has no time left
# is recorded as such and the rest go on. RESULTS_DIR gets results.json (rewritten after every
# step, so a killed run still leaves what it measured), log.txt, and steps/ with one file per
# step's output, also packed as steps.tar.gz (the device tool brings back at most 8 files).
# Without a CUDA device (the CPU rehearsal) the GPU steps are skipped, saying why, and only a
# tiny smoke run of the same command lines checks that they parse and run.
# Environment: MODEBENCH_DEPS_DIR (default .carry), MODEBENCH_TEST_DATA_DIR (default .carry/data),
# MODEBENCH_GPU_BUILD_DIR (default build-gpu), MODEBENCH_GPU_BUDGET_S (default 460),
# MODEBENCH_GPU_BUILD_LIMIT_S (default 300), JOBS (default nproc). For rehearsing the GPU branch
# of this script on a CPU (its bash, not its figures): DC_FORCE_GPU_STEPS=1 with small DC_SMALL,
# DC_BIG (presets), DC_PROMPT, DC_GEN, DC_REQUESTS; the CLI then falls back to the CPU and
# results.json says that nothing was measured on a GPU.
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 RESULTS_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$1"
results=$(cd "$1" && pwd)
cd "$root"
deps=${MODEBENCH_DEPS_DIR:-$root/.carry}
data=${MODEBENCH_TEST_DATA_DIR:-$deps/data}
build=${MODEBENCH_GPU_BUILD_DIR:-$root/build-gpu}
budget=${MODEBENCH_GPU_BUDGET_S:-460}
build_limit=${MODEBENCH_GPU_BUILD_LIMIT_S:-300}
jobs=${JOBS:-$(nproc)}
models=${MODEBENCH_GPU_MODELS_DIR:-$build/models}
log="$results/log.txt"
json="$results/results.json"
stepdir="$results/steps" # every step's output; packed into steps.tar.gz after each step
cli="$build/cli/modebench-cli"
start=$(date +%s)
small=${DC_SMALL:-llama-3.2-1b}
big=${DC_BIG:-llama-3-8b}
prompt=${DC_PROMPT:-2048}
gen=${DC_GEN:-128}
requests=${DC_REQUESTS:-64}
force=${DC_FORCE_GPU_STEPS:-0}
steps=()   # JSON objects, one per step
gpu="unknown"

: >"$log"
mkdir -p "$stepdir"
say() { echo "device_checks: $*" | tee -a "$log" >&2; }
jstr() { # a JSON string literal of $1
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/ }
  printf '"%s"' "$s"
}
write_results() {
  local body="" s
  for s in "${steps[@]}"; do body+="${body:+,}"$'\n    '"$s"; done
  {
    printf '{\n  "script": "tests/gpu/device_checks.sh",\n'
    printf '  "date_utc": %s,\n' "$(jstr "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
    printf '  "host": %s,\n' "$(jstr "$(uname -n)")"
    printf '  "gpu": %s,\n' "$(jstr "$gpu")"
    printf '  "elapsed_s": %d,\n' "$(($(date +%s) - start))"
    printf '  "budget_s": %d,\n' "$budget"
    printf '  "steps": [%s\n  ]\n}\n' "$body"
  } >"$json.tmp" && mv "$json.tmp" "$json"
  # The device tool brings back few files: results.json, log.txt and this one archive.
  tar -czf "$results/steps.tar.gz.tmp" -C "$results" steps 2>/dev/null && mv "$results/steps.tar.gz.tmp" "$results/steps.tar.gz"
}
record() { # name status seconds note [output-file]
  local out=${5:-}
  steps+=("{\"step\": $(jstr "$1"), \"status\": $(jstr "$2"), \"seconds\": $3, \"note\": $(jstr "$4"), \"output\": $(jstr "${out##*/}")}")
  write_results
}
left() { echo $((budget - ($(date +%s) - start))); }

# run NAME LIMIT_S OUTFILE CMD...: runs CMD under `timeout`, output to OUTFILE and the log.
run() {
  local name=$1 limit=$2 out=$3
  shift 3
  local remaining
  remaining=$(left)
  if [ "$remaining" -lt 15 ]; then
    say "$name: skipped, the ${budget}s budget is spent"
    record "$name" skipped 0 "no time left in the ${budget}s budget"
    return 1
  fi
  [ "$limit" -gt "$remaining" ] && limit=$remaining
  say "$name: $* (limit ${limit}s)"
  local t0 rc
  t0=$(date +%s)
  timeout -k 10 "$limit" "$@" >"$out" 2>>"$log"
  rc=$?
  local dt=$(($(date +%s) - t0))
  if [ $rc -eq 0 ]; then
    record "$name" ok "$dt" "" "$out"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    say "$name: TIMED OUT after ${limit}s"
    record "$name" timeout "$dt" "killed after ${limit}s" "$out"
  else
    say "$name: FAILED (exit $rc); the end of its output:"
    tail -n 15 "$out" | tee -a "$log" >&2
    record "$name" failed "$dt" "exit $rc: $(tail -n 4 "$out" | tr '\n' ' ' | cut -c1-600)" "$out"
  fi
  return $rc
}

say "start $(date -u +%FT%TZ) in $root, results in $results, budget ${budget}s"
command -v nvidia-smi >/dev/null && nvidia-smi -L >>"$log" 2>&1
command -v nvcc >/dev/null && nvcc --version | tail -n 2 >>"$log" 2>&1
if [ ! -f "$deps/include/nlohmann/json.hpp" ]; then
  say "no carried dependencies in $deps: run tests/gpu/prepare_carry.sh first (and carry .carry)"
  record prepare failed 0 "missing $deps; run tests/gpu/prepare_carry.sh on the development machine"
  exit 1
fi

# 1. Build: sm_90 only, and only what the checks use.
run configure 120 "$stepdir/configure.txt" cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMODEBENCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real -DMODEBENCH_GUI=OFF -DMODEBENCH_STORE=OFF \
  -DMODEBENCH_HTTP=OFF -DMODEBENCH_DEPS_DIR="$deps" -DMODEBENCH_TEST_DATA_DIR="$data" || { say "cannot configure; stop"; exit 1; }
run build "$build_limit" "$stepdir/build.txt" cmake --build "$build" -j "$jobs" --target modebench-cli gpu_tests ||
  { say "cannot build; stop"; exit 1; }

# 2. Is there a device? (the CLI's own view, as JSON)
run devices 30 "$stepdir/devices.json" "$cli" devices --json
if grep -q '"cuda:0"' "$stepdir/devices.json" 2>/dev/null; then
  gpu=$(grep -o '"name": *"[^"]*"' "$stepdir/devices.json" | sed -n 2p | sed 's/.*: *"//; s/"$//')
  have_gpu=1
else
  gpu="none ($(grep -o '"cuda_note": *"[^"]*"' "$stepdir/devices.json" 2>/dev/null | sed 's/.*: *"//; s/"$//'))"
  have_gpu=0
fi
say "GPU: $gpu"
write_results

# 3. The gpu tests (they skip, saying so, without a device). The F32 arch models and the kquant
# files travel xz-compressed.
for z in "$data"/arch/*.gguf.xz "$data"/kquant/*.gguf.xz; do
  [ -e "$z" ] || continue
  [ -e "${z%.xz}" ] || xz -dkc "$z" >"${z%.xz}" 2>>"$log" || { say "cannot unpack $z (the tests that need it skip)"; rm -f "${z%.xz}"; }
done
run gpu_tests 240 "$stepdir/gpu_tests.txt" ctest --test-dir "$build" -L gpu --output-on-failure --timeout 120 \
  --output-junit "$stepdir/gpu_tests.xml"
skipped=$(grep -c "(Skipped)" "$stepdir/gpu_tests.txt" 2>/dev/null)
summary=$(grep -E "tests passed|tests failed" "$stepdir/gpu_tests.txt" 2>/dev/null | tail -n 1)
if [ "$have_gpu" -eq 1 ]; then
  record gpu_tests_summary "$([ "${skipped:-0}" -eq 0 ] && echo ok || echo warning)" 0 \
    "$summary; ${skipped:-0} skipped (none should skip on a GPU machine)" "$stepdir/gpu_tests.txt"
else
  record gpu_tests_summary skipped 0 "$summary; ${skipped:-0} skipped: no CUDA device, nothing on a GPU was checked" \
    "$stepdir/gpu_tests.txt"
fi

mkdir -p "$models"
if [ "$have_gpu" -eq 0 ] && [ "$force" = 1 ]; then
  say "DC_FORCE_GPU_STEPS=1 without a GPU: the GPU steps run on the CPU to rehearse this script; nothing is measured on a GPU"
  gpu="$gpu; GPU steps forced onto the CPU (rehearsal of the script, not a measurement)"
  record forced_rehearsal skipped 0 "no CUDA device: the bench and compare steps below ran on the CPU and measure nothing about the GPU"
  have_gpu=1
fi
if [ "$have_gpu" -eq 0 ]; then
  # Rehearsal: the same command lines on a tiny synthetic model (the CLI falls back to the CPU).
  for preset in llama-3.2-1b llama-3-8b; do
    for dtype in f16 q8_0 q4_0; do
      record "bench_${preset}_${dtype}" skipped 0 "no CUDA device: ${gpu}; nothing measured"
    done
  done
  for step in compare_c1 compare_c32; do
    record "$step" skipped 0 "no CUDA device: ${gpu}; nothing measured"
  done
  run smoke_make_model 60 "$stepdir/smoke_make_model.txt" "$cli" make-model --preset tiny --dtype q8_0 --context 512 \
    --out "$models/tiny-q8_0.gguf" --force
  run smoke_bench 60 "$stepdir/smoke_bench.json" "$cli" bench -m "$models/tiny-q8_0.gguf" --device cuda:0 --graphs \
    --prompt-tokens 64 --gen-tokens 8 --repetitions 1 --json
  run smoke_compare 120 "$stepdir/smoke_compare.txt" "$cli" compare -m "$models/tiny-q8_0.gguf" --a fast --b regular \
    --device cuda:0 -w chat --requests 4 -c 2 --input-tokens 32 --output-tokens 8 --no-store \
    --json "$stepdir/smoke_compare.json"
  say "done without a GPU: GPU steps skipped (see results.json); $(( $(date +%s) - start ))s"
  exit 0
fi

# 4. Speed. make-model is single-threaded and writes up to 16 GB, so all six models are made in
# the background at once (the machine has 16 cores) while the benches run one after another.
start_make() { # preset dtype: writes make_PRESET_DTYPE.rc ("EXIT SECONDS") when done
  local name="make_$1_$2" file="$models/$1-$2.gguf"
  (
    t0=$(date +%s)
    timeout -k 10 240 "$cli" make-model --preset "$1" --dtype "$2" --context 4096 --out "$file" --force \
      >"$stepdir/$name.txt" 2>&1
    echo "$? $(($(date +%s) - t0))" >"$stepdir/$name.rc"
  ) &
}
wait_make() { # preset dtype: records the make step; fails when the model is not there
  local name="make_$1_$2" waited=0
  while [ ! -f "$stepdir/$name.rc" ]; do
    if [ "$(left)" -lt 15 ]; then
      record "$name" timeout "$waited" "still running when the ${budget}s budget ran out" "$stepdir/$name.txt"
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  local rc secs
  read -r rc secs <"$stepdir/$name.rc"
  if [ "$rc" -eq 0 ]; then
    record "$name" ok "$secs" "waited ${waited}s for it" "$stepdir/$name.txt"
  else
    say "$name: FAILED (exit $rc)"
    record "$name" failed "$secs" "exit $rc: $(tail -n 2 "$stepdir/$name.txt" | tr '\n' ' ' | cut -c1-300)" "$stepdir/$name.txt"
    return 1
  fi
}
bench_model() { # preset dtype limit
  local file="$models/$1-$2.gguf"
  wait_make "$1" "$2" || return 1
  run "bench_$1_$2" "$3" "$stepdir/bench_$1_$2.json" "$cli" bench -m "$file" --device cuda:0 --graphs \
    --prompt-tokens "$prompt" --gen-tokens "$gen" --repetitions 3 --threads 8 --json
}
for dtype in f16 q8_0 q4_0; do
  start_make "$small" "$dtype"
  start_make "$big" "$dtype"
done
for dtype in f16 q8_0 q4_0; do
  bench_model "$small" "$dtype" 60
  rm -f "$models/$small-$dtype.gguf"
done
for dtype in f16 q8_0 q4_0; do # f16 first: the bandwidth and TFLOP/s targets are set there
  bench_model "$big" "$dtype" 90
  [ "$dtype" = q8_0 ] || rm -f "$models/$big-$dtype.gguf"
done

# 5. Fast versus regular on the 8B Q8_0 model (fast's `mixed` precision is Q8_0 too), closed loop.
m8="$models/$big-q8_0.gguf"
if [ -f "$m8" ]; then
  run compare_c1 90 "$stepdir/compare_c1.txt" "$cli" compare -m "$m8" --a fast --b regular --device cuda:0 \
    -w chat --requests $((requests / 8)) -c 1 --input-tokens 256 --output-tokens 64 --warmup 1 --threads 8 --no-store \
    --json "$stepdir/compare_c1.json"
  # One wave of 32: fast (batching off) serves them one at a time, so 64 would not fit the limit.
  run compare_c32 120 "$stepdir/compare_c32.txt" "$cli" compare -m "$m8" --a fast --b regular --device cuda:0 \
    -w chat --requests $((requests < 32 ? requests : 32)) -c 32 --input-tokens 256 --output-tokens 64 --warmup 1 --threads 8 --no-store \
    --json "$stepdir/compare_c32.json"
else
  record compare_c1 skipped 0 "no $big q8_0 model (its make step failed or ran out of time)"
  record compare_c32 skipped 0 "no $big q8_0 model (its make step failed or ran out of time)"
fi
wait # background model writers (each bounded by its own timeout)
rm -f "$models"/*.gguf
say "done: $(( $(date +%s) - start ))s; results in $json"
