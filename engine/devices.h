// The compute devices this build can use: the CPU always, CUDA devices when compiled in.
#pragma once

#include <cstdint>
#include <string>
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

} // namespace mb::engine
