// The machine and build a run was measured on (stored with runs by the CLI and the GUI).
#pragma once
#include <nlohmann/json.hpp>

namespace mb::lab {

// {"modebench_version", "build_type", "compiler", "os", "threads", "cpu", "devices",
// "cuda_compiled"}: engine::listDevices for the CPU and GPUs, `threads` as used by the run.
nlohmann::ordered_json environmentJson(int threads);

} // namespace mb::lab
