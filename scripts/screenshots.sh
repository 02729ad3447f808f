#!/usr/bin/env bash
# Regenerates docs/screenshots/*.png with `modebench --screenshot` (offscreen), each page
# showing real data: the playground on stories260K (real text), the playground with images on
# the tiny llava pair, a benchmark, the history
# and the models page on a synthetic stories15m (random weights, real timing).
# Needs a release build (scripts/setup.sh run|test) and ../shared/data.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${MODEBENCH_BUILD_DIR:-build/release}
data=${MODEBENCH_TEST_DATA_DIR:-$root/../shared/data}
out=docs/screenshots
gui="$build/gui/modebench"
cli="$build/cli/modebench-cli"
[ -x "$gui" ] || { echo "screenshots: $gui is missing; build first (bash scripts/setup.sh test)" >&2; exit 1; }
[ -f "$data/models/stories260K.gguf" ] || { echo "screenshots: $data/models/stories260K.gguf is missing" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$tmp/config" XDG_RUNTIME_DIR="$tmp/runtime"
mkdir -p "$XDG_RUNTIME_DIR" "$out"
chmod 700 "$XDG_RUNTIME_DIR"
db="$tmp/runs.db"
model="$tmp/stories15m-q8_0.gguf"
# Context raised to 2048 (as in docs/PERFORMANCE.md) so that the 289-token shared-prefix
# prompts fit; at its own 256 the fast profile would truncate them and regular reject them.
"$cli" make-model --preset stories15m --dtype q8_0 --seed 1 --context 2048 --out "$model" > /dev/null

# A small prompt corpus for the migration walk-through's node A.
prompts="$tmp/prompts.jsonl"
printf '%s\n' '{"prompt": "Once upon a time there was a little girl"}' '{"prompt": "The dog ran to the park"}' \
  '{"prompt": "Tell me a story about a brave knight and a dragon"}' > "$prompts"
shot() { # PAGE MODEL
  echo "screenshots: $1"
  "$gui" --db "$db" --model "$2" --prompts "$prompts" --screenshot "$1" "$out/$1.png"
}
shot playground "$data/models/stories260K.gguf"
# The Playground with two images on the tiny llava pair (a random-weight LM, so its text is
# noise; ../shared/data/mm): thumbnails, image tokens and encode ms. Its own database, so
# that the pages below see only the stories runs.
mm="$data/mm"
if [ -f "$mm/models/tiny-mmproj-f32.gguf" ]; then
  echo "screenshots: playground-image"
  "$gui" --db "$tmp/images.db" --model "$data/kquant/tiny-llama-F32.gguf" --mmproj "$mm/models/tiny-mmproj-f32.gguf" \
    --image "$mm/images/grad64.png" --image "$mm/images/checker100x50.png" --screenshot playground "$out/playground-image.png"
fi
# A capacity sweep of the same two profiles: the Selection page takes its runs (tagged "sweep")
# as capacity points beside the benchmark's run, and the report shows them.
echo "screenshots: capacity sweep (concurrency 1, 2, 4)"
"$cli" compare -m "$model" --db "$db" --threads 2 --sweep concurrency --sweep-levels 1,2,4 > /dev/null 2>&1
shot benchmark "$model"
shot history "$model"
shot models "$model"
for page in selection migration report settings; do shot "$page" "$model"; done  # in this order
# The Plugins page: the sample script approved, its audit and the sandbox on this machine.
"$cli" plugins approve docs/plugins/title_case.py --by screenshots --db "$db" > /dev/null 2>&1
shot plugins "$model"
echo "screenshots: wrote $(ls "$out"/*.png | wc -l) images to $out"
