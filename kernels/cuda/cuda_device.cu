// CUDA device discovery through the runtime API (compiled only when nvcc is available).
#include "kernels/cuda/cuda_device.h"

#include <cuda_runtime.h>

namespace mb::kernels::cuda {

std::vector<DeviceInfo> listDevices(std::string* whyNone) {
    std::vector<DeviceInfo> out;
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        if (whyNone) *whyNone = cudaGetErrorString(err);
        cudaGetLastError(); // clear the sticky error state
        return out;
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        out.push_back({i, prop.name, static_cast<uint64_t>(prop.totalGlobalMem), prop.major, prop.minor});
    }
    if (out.empty() && whyNone) *whyNone = "no CUDA device found";
    return out;
}

} // namespace mb::kernels::cuda
