// Enumerating the CPU and (when built with CUDA) the GPUs.
#include "engine/devices.h"

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/thread_pool.h"

#include <fstream>
#include <unistd.h>

#ifdef MODEBENCH_HAVE_CUDA
#include "kernels/cuda/cuda_device.h"
#endif

namespace mb::engine {

namespace {
std::string cpuModelName() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "CPU";
}
} // namespace

DeviceList listDevices() {
    DeviceList list;
    DeviceDescription cpu;
    cpu.id = "cpu";
    cpu.name = cpuModelName();
    cpu.threads = kernels::ThreadPool::hardwareThreads();
    cpu.memoryBytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
    cpu.features = kernels::cpuFeatures().describe();
    list.devices.push_back(cpu);
#ifdef MODEBENCH_HAVE_CUDA
    list.cudaCompiled = true;
    for (const auto& d : kernels::cuda::listDevices(&list.cudaNote)) {
        DeviceDescription g;
        g.id = "cuda:" + std::to_string(d.index);
        g.name = d.name;
        g.memoryBytes = d.memoryBytes;
        g.features = "sm_" + std::to_string(d.computeMajor) + std::to_string(d.computeMinor);
        list.devices.push_back(g);
    }
#else
    list.cudaNote = "this build has no CUDA backend";
#endif
    return list;
}

} // namespace mb::engine
