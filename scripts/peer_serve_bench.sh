#!/usr/bin/env bash
# Serving side by side: modebench-cli serve (fast, regular) and llama.cpp's llama-server (-np 1, -np 8)
# on one model file, each driven through our own `compare` with remote: candidates, A and B
# interleaved over slices of the same workload. Prints one row per server and workload.
#   LLAMA_CPP_BIN=/path/to/llama.cpp/build/bin scripts/peer_bench.sh serve [options] MODEL.gguf
# Options: --threads 2, --requests 48 (chat), --output-tokens 64, --ctx 2048 (per sequence),
#          --cli PATH (default build/release/cli/modebench-cli), --out DIR (JSON per pair; default a temp dir).
# llama.cpp is a measurement reference only: build it yourself outside this repository; without
# LLAMA_CPP_BIN the script says so and exits 0.
set -euo pipefail

threads=2 requests=48 output=64 ctx=2048 out=""
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="$root/build/release/cli/modebench-cli"
model=""
while (($#)); do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --output-tokens) output=$2; shift 2 ;;
    --ctx) ctx=$2; shift 2 ;;
    --cli) cli=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "peer_bench serve: unknown option $1" >&2; exit 2 ;;
    *) model=$1; shift ;;
  esac
done
if [ -z "${LLAMA_CPP_BIN:-}" ]; then
  echo "peer_bench serve: LLAMA_CPP_BIN is not set (the folder holding llama-server); skipping"
  exit 0
fi
server="$LLAMA_CPP_BIN/llama-server"
[ -x "$server" ] || { echo "peer_bench serve: no executable $server" >&2; exit 2; }
[ -x "$cli" ] || { echo "peer_bench serve: no executable $cli (build first)" >&2; exit 2; }
[ -n "$model" ] && [ -r "$model" ] || { echo "peer_bench serve: give one readable model file" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d)
mkdir -p "$out"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
healthy() { # port: waits up to 60 s for /health
  for _ in $(seq 600); do
    python3 - "$1" <<'PY' 2>/dev/null && return 0
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=1).read()
PY
    sleep 0.1
  done
  echo "peer_bench serve: the server on port $1 did not become healthy" >&2; exit 2
}

p_fast=$(port); "$cli" serve -m "$model" --profile fast --port "$p_fast" --threads "$threads" 2>"$out/fast.log" & pids+=($!)
p_reg=$(port); "$cli" serve -m "$model" --profile regular --port "$p_reg" --threads "$threads" 2>"$out/regular.log" & pids+=($!)
p_l1=$(port); "$server" -m "$model" --host 127.0.0.1 --port "$p_l1" -t "$threads" -c "$ctx" -np 1 --cache-reuse 256 \
  >"$out/llama-np1.log" 2>&1 & pids+=($!)
p_l8=$(port); "$server" -m "$model" --host 127.0.0.1 --port "$p_l8" -t "$threads" -c $((ctx * 8)) -np 8 -cb \
  >"$out/llama-np8.log" 2>&1 & pids+=($!)
for p in "$p_fast" "$p_reg" "$p_l1" "$p_l8"; do healthy "$p"; done
url() { echo "remote:http://127.0.0.1:$1/v1"; }

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
     "load $(cut -d' ' -f1-3 /proc/loadavg), MODEBENCH_CPU=${MODEBENCH_CPU:-auto}, model $(basename "$model"), threads $threads"
echo "# each pair: $cli compare -m MODEL --a remote:OURS --b remote:LLAMA --interleave -w W [-c C] --no-store --json F"
printf '%-14s %-12s %3s %9s %9s %9s %9s %6s\n' workload server c ttft_p50 tpot_p50 e2e_p50 out_tok_s failed

pair() { # name workload concurrency ours_port ours_name llama_port llama_name extra...
  local name=$1 w=$2 c=$3 po=$4 no=$5 pl=$6 nl=$7; shift 7
  "$cli" compare -m "$model" --a "$(url "$po")" --b "$(url "$pl")" --interleave -w "$w" -c "$c" --no-store \
    --output-tokens "$output" --json "$out/$name.json" "$@" >/dev/null 2>"$out/$name.err" ||
    { echo "peer_bench serve: $name failed: $(tail -1 "$out/$name.err")" >&2; return 0; }
  python3 - "$out/$name.json" "$w" "$c" "$no" "$nl" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for side, label in (("a", sys.argv[4]), ("b", sys.argv[5])):
    s = d[side]["summary"]
    failed = s["requests"] - s["ok"]
    print(f'{sys.argv[2]:<14} {label:<12} {sys.argv[3]:>3} {s["ttft_ms"]["p50"]:9.1f} {s["tpot_ms"]["p50"]:9.2f} '
          f'{s["e2e_ms"]["p50"]:9.1f} {s["output_tokens_per_s"]:9.1f} {failed:6d}')
PY
}

pair sp-fast-np1   shared-prefix 1  "$p_fast" ours-fast    "$p_l1" llama-np1
# -np 8 at concurrency 1: eight slots keep eight prefixes (the workload's groups), its best case for caching.
pair sp-fast-np8   shared-prefix 1  "$p_fast" ours-fast    "$p_l8" llama-np8
pair sp-reg-np8    shared-prefix 8  "$p_reg"  ours-regular "$p_l8" llama-np8
pair chat1-fast    chat 1  "$p_fast" ours-fast    "$p_l1" llama-np1 --requests "$requests"
pair chat1-reg     chat 1  "$p_reg"  ours-regular "$p_l1" llama-np1 --requests "$requests"
pair chat8-reg     chat 8  "$p_reg"  ours-regular "$p_l8" llama-np8 --requests "$requests"
pair chat32-reg    chat 32 "$p_reg"  ours-regular "$p_l8" llama-np8 --requests "$requests"
echo "# JSON per pair and server logs: $out"
