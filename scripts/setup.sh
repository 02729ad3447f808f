#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages only), builds, and runs the main job or every test.
#   scripts/setup.sh run    build (release) and open the workbench (modebench) on $MODEBENCH_MODEL,
#                           or on a synthetic stories15m model generated once; without a display
#                           (no DISPLAY or WAYLAND_DISPLAY) stream a generation with modebench-cli
#   scripts/setup.sh test   build (release) and run every test through CTest
# Environment: MODEBENCH_MODEL (GGUF path), MODEBENCH_PROMPT, MODEBENCH_BUILD_DIR,
# MODEBENCH_CUDA (AUTO|ON|OFF, default AUTO), MODEBENCH_JOBS (parallel build jobs).
set -euo pipefail

mode=${1:-}
case "$mode" in
  run|test) ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

packages=(build-essential cmake ninja-build pkg-config git
          libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libssl-dev
          libsqlite3-dev libcpp-httplib-dev libre2-dev libseccomp-dev python3 libstb-dev
          qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev fonts-dejavu-core
          poppler-utils)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build=${MODEBENCH_BUILD_DIR:-build/release}
jobs=${MODEBENCH_JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMODEBENCH_CUDA="${MODEBENCH_CUDA:-AUTO}"
cmake --build "$build" -j "$jobs"

cli="$build/cli/modebench-cli"
if [ "$mode" = run ]; then
  model=${MODEBENCH_MODEL:-}
  if [ -z "$model" ]; then
    model="$build/models/stories15m-q8_0.gguf"
    if [ ! -f "$model" ]; then
      mkdir -p "$(dirname "$model")"
      echo "setup: no MODEBENCH_MODEL set; writing a synthetic stories15m model (random weights: the text is meaningless, the timing is real)"
      "$cli" make-model --preset stories15m --dtype q8_0 --seed 1 --out "$model"
    fi
  fi
  gui="$build/gui/modebench"
  if [ -x "$gui" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
    echo "setup: opening the workbench on $model"
    exec "$gui" --model "$model"
  fi
  echo "setup: no display (DISPLAY and WAYLAND_DISPLAY are unset), so instead of opening the workbench:"
  echo "setup: modebench-cli generate on $model"
  "$cli" info --model "$model" | head -n 5
  exec "$cli" generate --model "$model" --prompt "${MODEBENCH_PROMPT:-Once upon a time}" --max-tokens 64
fi

ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900
