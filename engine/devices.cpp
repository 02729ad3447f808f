// Enumerating the CPU and (when built with CUDA) the GPUs.
#include "engine/devices.h"

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/thread_pool.h"

#include <charconv>
#include <fstream>
#include <stdexcept>
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

std::string Device::id() const { return kind == Kind::Cpu ? "cpu" : "cuda:" + std::to_string(index); }

Device parseDevice(std::string_view text) {
    if (text == "cpu") return {};
    if (text == "cuda") return {Device::Kind::Cuda, 0};
    if (text.rfind("cuda:", 0) == 0) {
        const std::string_view digits = text.substr(5);
        int index = -1;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() && index >= 0)
            return {Device::Kind::Cuda, index};
    }
    throw std::invalid_argument("device '" + std::string(text) + "' is not cpu, cuda or cuda:N");
}

DeviceChoice resolveDevice(const Device& requested, const DeviceList& available) {
    if (requested.kind == Device::Kind::Cpu) return {};
    if (!available.cudaCompiled)
        return {{}, requested.id() + " requested but this build has no CUDA backend; using the CPU"};
    std::vector<std::string> gpus;
    for (const auto& d : available.devices)
        if (d.id.rfind("cuda:", 0) == 0) gpus.push_back(d.id);
    if (gpus.empty())
        return {{}, requested.id() + " requested but there is no CUDA device (" + available.cudaNote + "); using the CPU"};
    for (const auto& id : gpus)
        if (id == requested.id()) return {requested, {}};
    std::string list;
    for (const auto& id : gpus) list += (list.empty() ? "" : ", ") + id;
    throw std::invalid_argument("device " + requested.id() + " does not exist (this machine has " + list + ")");
}

DeviceChoice resolveDevice(std::string_view text) { return resolveDevice(parseDevice(text), listDevices()); }

} // namespace mb::engine
