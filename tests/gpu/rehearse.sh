#!/usr/bin/env bash
# Rehearses tests/gpu/device_checks.sh on this CPU machine the way the GPU machine runs it: Debian's
# -dev packages hidden in a private mount namespace (needs root), so the build can use only the
# carried folder, with the GPU-machine options. The GPU steps then skip, saying why.
#   tests/gpu/rehearse.sh [RESULTS_DIR]   (default /tmp/gpu-rehearsal; JOBS, budget and build limit
#                                          are raised for a 2-core machine)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-/tmp/gpu-rehearsal}
if [ "$(id -u)" -ne 0 ]; then
  echo "rehearse: needs root (unshare -m and mounts that hide the system's -dev packages)" >&2
  exit 1
fi
"$root/tests/gpu/prepare_carry.sh"
export MODEBENCH_GPU_BUILD_DIR=${MODEBENCH_GPU_BUILD_DIR:-$root/build-gpu-rehearsal}
export MODEBENCH_GPU_BUDGET_S=${MODEBENCH_GPU_BUDGET_S:-3000} MODEBENCH_GPU_BUILD_LIMIT_S=${MODEBENCH_GPU_BUILD_LIMIT_S:-2400}
export JOBS=${JOBS:-2}
exec unshare -m bash -c '
  set -e
  for p in /usr/include/nlohmann /usr/include/CLI /usr/include/gtest /usr/include/gmock /usr/include/openssl \
           /usr/include/x86_64-linux-gnu/openssl /usr/src/googletest /usr/lib/x86_64-linux-gnu/cmake \
           /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json /usr/lib/x86_64-linux-gnu/pkgconfig \
           /usr/share/pkgconfig /usr/include/x86_64-linux-gnu/qt6; do
    [ -d "$p" ] && mount -t tmpfs none "$p"
  done
  for f in /usr/include/httplib.h /usr/include/sqlite3.h; do
    [ -e "$f" ] && mount --bind /dev/null "$f"
  done
  echo "rehearse: system -dev headers, CMake packages and pkg-config files hidden" >&2
  exec "$0/tests/gpu/device_checks.sh" "$1"
' "$root" "$out"
