#!/usr/bin/env bash
# Run HERE before the device call: copies what tests/gpu/device_checks.sh needs and the GPU machine lacks
# into .carry/ (git-ignored, carried by the device tool): the header-only nlohmann/json and CLI11 and
# GoogleTest's sources from this machine's Debian packages, and the test data the gpu tests read.
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

rm -rf "$out"
mkdir -p "$out/include" "$out/data/models" "$out/data/golden"
cp -a /usr/include/nlohmann /usr/include/CLI "$out/include/"
# GoogleTest's own tree (googletest/ and googlemock/ with their CMake files); built from source there.
cp -a /usr/src/googletest "$out/googletest"
cp -p "$data"/models/stories260K.gguf "$data"/models/stories260K-f16.gguf "$out/data/models/"
cp -p "$data"/golden/stories260K.json "$data"/golden/stories260K_logits_once_upon_a_time_pos4.f32 "$out/data/golden/"
# The tiny llava mmproj files and their encoder goldens (cuda_clip_test.cpp), about 6 MiB.
if [ -d "$data/mm" ]; then
  mkdir -p "$out/data/mm/models" "$out/data/mm/golden"
  cp -p "$data"/mm/models/*.gguf "$out/data/mm/models/"
  cp -p "$data"/mm/golden/*.pre.f32 "$data"/mm/golden/*.embd.f32 "$out/data/mm/golden/"
fi
# llama.cpp's quantised tiny llama (cuda_quant_test.cpp): the files, their JSON and the float64 reference, about 31 MiB.
if [ -d "$data/kquant" ]; then
  mkdir -p "$out/data/kquant"
  cp -p "$data"/kquant/*.gguf "$data"/kquant/*.json "$data"/kquant/*.dequant_ref_logits.f32 "$out/data/kquant/"
fi

size=$(du -sm "$out" | cut -f1)
echo "prepare_carry: $out holds ${size} MiB (the device tool carries at most 64 MiB in all)"
if [ "$size" -gt 48 ]; then
  echo "prepare_carry: too big to carry beside the working tree" >&2
  exit 1
fi
