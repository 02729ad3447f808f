// The compute devices this build can use: the CPU always, CUDA devices when compiled in.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mb::engine {

struct DeviceDescription {
    std::string id;     // "cpu", "cuda:0", ...
    std::string name;   // CPU model or GPU name
    uint64_t memoryBytes = 0;
    int threads = 0;    // CPU only: hardware threads available
    std::string features; // CPU: SIMD features in use; CUDA: compute capability
};

struct DeviceList {
    bool cudaCompiled = false;
    std::string cudaNote; // why no CUDA device is listed, when none is
    std::vector<DeviceDescription> devices;
};

DeviceList listDevices();

// A compute device a backend runs on: the CPU, or CUDA device `index`.
struct Device {
    enum class Kind { Cpu, Cuda };
    Kind kind = Kind::Cpu;
    int index = 0;
    std::string id() const; // "cpu", "cuda:0", ...
    bool operator==(const Device&) const = default;
};

// "cpu", "cuda" (= cuda:0) or "cuda:N". Throws std::invalid_argument naming the text otherwise.
Device parseDevice(std::string_view text);

// A requested device checked against what exists. `note` is set when the request fell back
// to the CPU (say it once, on stderr).
struct DeviceChoice {
    Device device;
    std::string note;
};
// cpu stays cpu. cuda:N on a build without CUDA, or on a machine where the runtime sees no
// device, falls back to the CPU with a note; cuda:N beyond the devices that exist throws
// std::invalid_argument listing them (a typo must not silently measure the CPU).
DeviceChoice resolveDevice(const Device& requested, const DeviceList& available);
// parseDevice + listDevices().
DeviceChoice resolveDevice(std::string_view text);

} // namespace mb::engine
