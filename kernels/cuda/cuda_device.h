// CUDA device discovery, callable from code that has no CUDA headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mb::kernels::cuda {

struct DeviceInfo {
    int index = 0;
    std::string name;
    uint64_t memoryBytes = 0;
    int computeMajor = 0;
    int computeMinor = 0;
};

// Devices the CUDA runtime reports. On a machine without a driver or device the list is
// empty and `whyNone` says why (e.g. "no CUDA-capable device is detected").
std::vector<DeviceInfo> listDevices(std::string* whyNone);

} // namespace mb::kernels::cuda
