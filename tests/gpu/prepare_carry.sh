#!/usr/bin/env bash
# Run HERE before the device call: copies what tests/gpu/device_checks.sh needs and the GPU machine lacks
# into .carry/ (git-ignored, carried by the device tool): the header-only nlohmann/json and CLI11 and
# GoogleTest's sources from this machine's Debian packages, and the test data the gpu tests read (stories260K,
# the tiny model of every architecture with llama.cpp's goldens, one llava image prompt).
#   tests/gpu/prepare_carry.sh [OUT_DIR]    (default: .carry in the repository root)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/.carry}
data=${MODEBENCH_TEST_DATA_DIR:-$root/../shared/data}

need() { [ -e "$1" ] || { echo "prepare_carry: $1 is missing (install $2)" >&2; exit 1; }; }
need /usr/include/nlohmann/json.hpp nlohmann-json3-dev
need /usr/include/CLI/CLI.hpp libcli11-dev
need /usr/src/googletest/CMakeLists.txt googletest
need "$data/models/stories260K.gguf" "../shared/data (the project's test data)"

need "$data/arch/tiny-llama31.f32.gguf" "../shared/data (the project's test data)"
need "$data/mm/golden/grad64.embd.f32" "../shared/data (the project's test data)"

rm -rf "$out"
mkdir -p "$out/include" "$out/data/models" "$out/data/golden" "$out/data/arch" "$out/data/mm/golden/lm_kvf32"
cp -a /usr/include/nlohmann /usr/include/CLI "$out/include/"
# GoogleTest's own tree (googletest/ and googlemock/ with their CMake files); built from source there.
cp -a /usr/src/googletest "$out/googletest"
cp -p "$data"/models/stories260K.gguf "$data"/models/stories260K-f16.gguf "$out/data/models/"
cp -p "$data"/golden/stories260K.json "$data"/golden/stories260K_logits_once_upon_a_time_pos4.f32 "$out/data/golden/"
# Every architecture (tests/gpu/cuda_arch_forward_test.cpp): the Q8_0 files and llama.cpp's goldens as they are,
# the F32 files xz-compressed (41 MB -> about 15 MB; device_checks.sh unpacks them before the tests).
for m in tiny-llama31 tiny-qwen2 tiny-gemma2 tiny-phi3; do
  for q in f32 Q8_0; do
    cp -p "$data/arch/$m.$q.json" "$data/arch/$m.$q.logits.f32" "$data/arch/$m.$q.gen_logits.f32" "$out/data/arch/"
  done
  cp -p "$data/arch/$m.Q8_0.gguf" "$out/data/arch/"
  xz -T2 -6 -c "$data/arch/$m.f32.gguf" >"$out/data/arch/$m.f32.gguf.xz"
done
# Image prompts (tests/gpu/cuda_images_test.cpp): llava's token ids and grad64's encoder rows.
cp -p "$data"/mm/golden/grad64.embd.f32 "$out/data/mm/golden/"
cp -p "$data"/mm/golden/lm_kvf32/grad64.lm.json "$out/data/mm/golden/lm_kvf32/"
# The tiny llava mmproj files and their encoder goldens (cuda_clip_test.cpp), about 6 MiB.
if [ -d "$data/mm" ]; then
  mkdir -p "$out/data/mm/models"
  cp -p "$data"/mm/models/*.gguf "$out/data/mm/models/"
  cp -p "$data"/mm/golden/*.pre.f32 "$data"/mm/golden/*.embd.f32 "$out/data/mm/golden/"
fi
# llama.cpp's k-quant tiny llamas (cuda_quant_test.cpp): the files (xz-compressed, unpacked by
# device_checks.sh), their JSON and the float64 reference.
if [ -d "$data/kquant" ]; then
  mkdir -p "$out/data/kquant"
  for q in Q6_K Q5_K_M Q4_K_M Q3_K_M Q2_K; do
    f="$data/kquant/tiny-llama-$q"
    cp -p "$f.json" "$f.dequant_ref_logits.f32" "$out/data/kquant/"
    xz -T2 -6 -c "$f.gguf" >"$out/data/kquant/tiny-llama-$q.gguf.xz"
  done
fi

size=$(du -sm "$out" | cut -f1)
echo "prepare_carry: $out holds ${size} MiB (the device tool carries at most 64 MiB in all)"
# The working tree travels too (about 6 MiB of tracked files): keep 8 MiB for it.
if [ "$size" -gt 56 ]; then
  echo "prepare_carry: too big to carry beside the working tree" >&2
  exit 1
fi
