#!/usr/bin/env bash
# Side-by-side CPU speed of modebench-cli bench and llama.cpp's llama-bench on the same GGUF files:
# alternating runs, several passes, each figure's ratio (ours / llama.cpp's) printed per pass.
#   LLAMA_CPP_BIN=/path/to/llama.cpp/build/bin scripts/peer_bench.sh [options] MODEL.gguf...
# Options: --threads "1 2" (default), --prompt-tokens 128, --gen-tokens 32, --repetitions 3,
#          --passes 2, --cli PATH (default build/release/cli/modebench-cli).
# MODEBENCH_CPU=avx2 (or portable) in the environment selects our kernel table, as for every command.
# llama.cpp is a measurement reference only: build it yourself outside this repository; without
# LLAMA_CPP_BIN the script says so and exits 0.
#   scripts/peer_bench.sh serve ... runs scripts/peer_serve_bench.sh (serving side by side; --help there).
set -euo pipefail
[ "${1:-}" = serve ] && { shift; exec "$(dirname "${BASH_SOURCE[0]}")/peer_serve_bench.sh" "$@"; }

threads="1 2" prompt=128 gen=32 reps=3 passes=2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="$root/build/release/cli/modebench-cli"
models=()
while (($#)); do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --prompt-tokens) prompt=$2; shift 2 ;;
    --gen-tokens) gen=$2; shift 2 ;;
    --repetitions) reps=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    --cli) cli=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "peer_bench: unknown option $1" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
if [ -z "${LLAMA_CPP_BIN:-}" ]; then
  echo "peer_bench: LLAMA_CPP_BIN is not set (the folder holding llama-bench); skipping"
  exit 0
fi
bench="$LLAMA_CPP_BIN/llama-bench"
[ -x "$bench" ] || { echo "peer_bench: no executable $bench" >&2; exit 2; }
[ -x "$cli" ] || { echo "peer_bench: no executable $cli (build first)" >&2; exit 2; }
((${#models[@]})) || { echo "peer_bench: give at least one model file" >&2; exit 2; }

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
     "load $(cut -d' ' -f1-3 /proc/loadavg), MODEBENCH_CPU=${MODEBENCH_CPU:-auto}"
echo "# ours: $cli bench --prompt-tokens $prompt --gen-tokens 1 (prefill) and --prompt-tokens 1 --gen-tokens $gen (decode), --repetitions $reps --threads T --json"
echo "# llama.cpp: $bench -p $prompt -n $gen -r $reps -t T -o json"
printf '%-28s %2s %4s %10s %10s %6s %10s %10s %6s\n' model t pass pp_ours pp_llama ratio tg_ours tg_llama ratio

ours() { # model threads -> "prefill decode" tokens/s, measured as llama-bench measures them
  # llama-bench's pp runs the prompt on an empty cache and its tg decodes from position 0 with no
  # prompt before it, so ours takes prefill from a run of $prompt tokens (1 generated) and decode
  # from a run of 1 prompt token (the BOS) then $gen decodes: the same positions in both programs.
  local pp tg
  pp=$("$cli" bench --model "$1" --prompt-tokens "$prompt" --gen-tokens 1 --repetitions "$reps" --threads "$2" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["prefill_tok_s"]["mean"])')
  tg=$("$cli" bench --model "$1" --prompt-tokens 1 --gen-tokens "$gen" --repetitions "$reps" --threads "$2" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["decode_tok_s"]["mean"])')
  echo "$pp $tg"
}
theirs() {
  "$bench" -m "$1" -p "$prompt" -n "$gen" -r "$reps" -t "$2" -o json 2>/dev/null |
    python3 -c 'import json,sys
d=json.load(sys.stdin)
pp=[e["avg_ts"] for e in d if e["n_prompt"]>0 and e["n_gen"]==0]
tg=[e["avg_ts"] for e in d if e["n_gen"]>0 and e["n_prompt"]==0]
print(pp[0], tg[0])'
}
for m in "${models[@]}"; do
  for t in $threads; do
    for ((p = 1; p <= passes; ++p)); do
      # Alternate which program goes first so a warming or throttling machine favours neither.
      if ((p % 2)); then read -r po do_ < <(ours "$m" "$t"); read -r pl dl < <(theirs "$m" "$t")
      else read -r pl dl < <(theirs "$m" "$t"); read -r po do_ < <(ours "$m" "$t"); fi
      awk -v m="$(basename "$m")" -v t="$t" -v p="$p" -v po="$po" -v pl="$pl" -v do_="$do_" -v dl="$dl" \
        'BEGIN { printf "%-28s %2d %4d %10.1f %10.1f %6.2f %10.1f %10.1f %6.2f\n", m, t, p, po, pl, po / pl, do_, dl, do_ / dl }'
    done
  done
done
