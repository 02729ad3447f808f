#!/usr/bin/env bash
# Reruns issue 19's eight situations on this machine and prints each one's headline: synthetic
# stories15m Q8_0 (random weights, real timing) with its context raised to 4096, the default
# shared-prefix comparison repeated three times, a capacity sweep, then `select` (and `migrate`)
# under the requirements and price sheets each situation names. Needs a release build.
# Usage: bash scripts/situations.sh [OUT_DIR]   (default: a temporary directory, removed)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli=${MODEBENCH_BUILD_DIR:-$root/build/release}/cli/modebench-cli
[ -x "$cli" ] || { echo "situations: $cli is missing; build first" >&2; exit 1; }
if [ $# -ge 1 ]; then out=$1; mkdir -p "$out"; else out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
db="$out/runs.db"
rm -f "$db"
threads=${THREADS:-2}
model="$out/stories15m-q8_0.gguf"
"$cli" make-model --preset stories15m --dtype q8_0 --seed 1 --context 4096 --out "$model" --force > /dev/null
short="$out/stories15m-ctx256.gguf"
"$cli" make-model --preset stories15m --dtype q8_0 --seed 1 --out "$short" --force > /dev/null

ids() { grep -o 'stored run [0-9]*' | awk '{printf " --run %s", $3}'; }
sweepIds() { grep -o -- '--run [0-9][0-9]*' | tr '\n' ' '; }
req() { printf '%s\n' "$2" > "$out/$1.json"; echo "$out/$1.json"; }
headline() { # name, select args...
    local name=$1; shift
    echo "== $name"
    "$cli" select --db "$db" "$@" | grep -E '^(recommendation|basis|warning|no clear winner|dominance):|^  (fast|regular): knee|^  (fast|regular): no load' || true
}

echo "situations: comparing (3 repeats, shared-prefix, precision check) ..." >&2
runs=$("$cli" compare -m "$model" --db "$db" --threads "$threads" --repeat 3 --precision-check 4 2>&1 | ids)
echo "situations: capacity sweep (concurrency 1, 2, 4, 8) ..." >&2
sweep=$("$cli" compare -m "$model" --db "$db" --threads "$threads" --sweep concurrency --sweep-levels 1,2,4,8 2>&1 >/dev/null | grep 'size the capacity' | sweepIds)
first=$(echo "$runs" | awk '{print $1, $2}')
third=$(echo "$runs" | awk '{print $5, $6}')

r1=$(req s1 '{"slo": {"ttft_ms": {"p95": 3000}, "e2e_ms": {"p99": 10000}}, "monthly": {"requests": 30000000}}')
headline "1. TTFT p95 <= 3000 ms, e2e p99 <= 10000 ms, three repeats" $runs --requirements "$r1"

echo "situations: fast capped at 512 tokens on long-context prompts ..." >&2
printf '{"base": "fast", "max_context": 512}\n' > "$out/fast512.json"
capped=$("$cli" compare -m "$model" --db "$db" --threads "$threads" --a "$out/fast512.json" -w chat \
    --requests 16 --input-tokens 1000 --output-tokens 8 --repeat 3 2>&1 | ids)
headline "2. fast capped at 512, long-context inputs" $capped --requirements "$r1"
sel=$("$cli" select --db "$db" $capped --requirements "$r1" --save | grep -o 'saved as selection [0-9]*' | awk '{print $4}')
echo "== 2b. migrate after that selection"
"$cli" migrate --db "$db" --selection "$sel" --threads "$threads" | head -3

headline "3a. run 1 alone" $first --requirements "$r1"
headline "3b. run 3 alone" $third --requirements "$r1"

printf '{"currency": "CNY", "per_million": {"input": 0.2, "cached_input": 0.2001, "output": 0.8}}\n' > "$out/p4.json"
headline "4. cached price differing in the fourth digit" $runs --requirements "$r1" --prices "$out/p4.json"
"$cli" select --db "$db" $runs --requirements "$r1" --prices "$out/p4.json" | grep -E '^  cost ' || true

r5=$(req s5 '{"slo": {"ttft_ms": {"p95": 20}}}')
headline "5a. TTFT p95 <= 20 ms" $runs --requirements "$r5"
echo "situations: a model whose own context is 256 ..." >&2
# Regular rejects these prompts (exit 1: no successful request); the runs are stored all the same.
small=$("$cli" compare -m "$short" --db "$db" --threads "$threads" -w chat --requests 16 --input-tokens 300 \
    --output-tokens 8 --repeat 3 2>&1 | ids || true)
headline "5b. model context 256, 300-token prompts" $small --requirements "$r1"

headline "6. the seed's cost example (0% / 100% reference rows)" $runs \
    --requirements "$root/resources/requirements/seed-cost.json" --prices "$root/resources/prices/seed-cache-hits.json"
echo "   cost detail:"
"$cli" select --db "$db" $runs --requirements "$root/resources/requirements/seed-cost.json" \
    --prices "$root/resources/prices/seed-cache-hits.json" | grep -E '^  cost ' | head -2

printf '{"currency": "USD", "per_million": {"input": 0.1, "cached_input": 0.01, "output": 0.4}, "accelerator_hour": 2.5}\n' > "$out/p7.json"
r7=$(req s7 '{"slo": {"ttft_ms": {"p95": 3000}, "e2e_ms": {"p99": 10000}}, "monthly": {"requests": 30000000}, "quality": {"min_agreement": 0.5}}')
headline "7. 30 M requests a month, a quality floor, the sweep's capacity" $runs $sweep --requirements "$r7" --prices "$out/p7.json"

r8=$(req s8 '{"slo": {"ttft_ms": {"p95": 72}, "e2e_ms": {"p99": 10000}}, "ops_capability": "low"}')
headline "8a. TTFT p95 <= 72 ms, low operations capability" $runs --requirements "$r8"
sel8=$("$cli" select --db "$db" $runs --requirements "$r8" --save | grep -o 'saved as selection [0-9]*' | awk '{print $4}')
echo "== 8b. migrate after that selection"
"$cli" migrate --db "$db" --selection "$sel8" --threads "$threads" | head -6
