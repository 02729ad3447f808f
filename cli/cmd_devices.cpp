// `modebench-cli devices`: the compute devices this build can use.
#include "cli/command_util.h"

#include "engine/devices.h"

#include <iostream>
#include <memory>

namespace mb::cli {

void addDevicesCommand(CLI::App& root) {
    auto json = std::make_shared<bool>(false);
    CLI::App* cmd = root.add_subcommand("devices", "List the CPU and any CUDA devices");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([json] {
        const engine::DeviceList list = engine::listDevices();
        if (*json) {
            Json devices = Json::array();
            for (const auto& d : list.devices) {
                Json e{{"id", d.id}, {"name", d.name}, {"memory_bytes", d.memoryBytes}};
                if (d.id == "cpu") e["threads"] = d.threads;
                e[d.id == "cpu" ? "features" : "compute_capability"] = d.features;
                devices.push_back(e);
            }
            printJson({{"cuda_compiled", list.cudaCompiled}, {"cuda_note", list.cudaNote}, {"devices", devices}});
            return;
        }
        for (const auto& d : list.devices)
            std::cout << d.id << ": " << d.name << " (" << d.memoryBytes / (1024 * 1024) << " MiB"
                      << (d.id == "cpu" ? ", " + std::to_string(d.threads) + " threads" : std::string()) << ", "
                      << d.features << ")\n";
        if (list.devices.size() == 1) std::cout << "no CUDA device: " << list.cudaNote << '\n';
    });
}

} // namespace mb::cli
