#!/usr/bin/env bash
# Measures each built-in plugin's and the sample script's cost in fast and regular mode with
# `modebench-cli compare --plugins` (docs/PERFORMANCE.md, "Output plugins").
#   scripts/plugin_bench.sh MODEL [REQUESTS] [OUTPUT_TOKENS]
# Environment: MODEBENCH_BUILD_DIR (default build/release), THREADS (default 2). The sample
# script is approved in a throw-away store, where the runs go too; nothing is written to the user's store.
set -euo pipefail
model=${1:?usage: $0 MODEL [REQUESTS] [OUTPUT_TOKENS]}
requests=${2:-32}
tokens=${3:-64}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${MODEBENCH_BUILD_DIR:-$root/build/release}/cli/modebench-cli"
threads=${THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/runs.db"

cp "$root/docs/plugins/title_case.py" "$work/"
"$cli" plugins approve "$work/title_case.py" --by plugin_bench --db "$db" > /dev/null 2>&1
sha=$("$cli" plugins audit "$work/title_case.py" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sha256"])')
cat > "$work/script.json" <<JSON
{"plugins": [{"type": "script", "path": "title_case.py", "sha256": "$sha"}]}
JSON
for c in word_filter regex_replace json_output pii_mask trim_format; do cp "$root/docs/plugins/$c.json" "$work/"; done

echo "plugin_bench: $(basename "$model"), $requests chat requests x $tokens tokens, $threads threads, $(date -u +%FT%TZ)"
echo "plugin_bench: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
printf '%-14s %-8s %10s %10s %10s %10s %10s %12s\n' chain mode "ms p50" "set-up p50" "ms/call" "+TTFT p50" "+TTFT p95" "e2e p50 Δ"
for chain in word_filter regex_replace json_output pii_mask trim_format script; do
  # The same mode with and without the chain, interleaved, for each mode.
  for mode in fast regular; do
    "$cli" compare -m "$model" --a "$mode" --b "$mode" --b-plugins "$work/$chain.json" -w chat \
      --requests "$requests" --output-tokens "$tokens" --threads "$threads" --interleave \
      --db "$db" --json "$work/out.json" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
    python3 - "$work/out.json" "$chain" "$mode" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["b"]["summary"]["postprocess"]
d = j["b"]["summary"]["e2e_ms"]["p50"] - j["a"]["summary"]["e2e_ms"]["p50"]
print(f'{sys.argv[2]:<14} {sys.argv[3]:<8} {p["ms"]["p50"]:10.3f} {p["start_ms"]["p50"]:10.3f} {p["call_ms"]["p50"]:10.4f} '
      f'{p["extra_ttft_ms"]["p50"]:10.3f} {p["extra_ttft_ms"]["p95"]:10.3f} {d:12.2f}')
PY
  done
done
