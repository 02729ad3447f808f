// The machine and build a run was measured on, as stored with every run.
#include "lab/environment.h"

#include "engine/devices.h"

#include <sys/utsname.h>

namespace mb::lab {

nlohmann::ordered_json environmentJson(int threads) {
    nlohmann::ordered_json env;
    env["modebench_version"] = MODEBENCH_VERSION;
    env["build_type"] = MODEBENCH_BUILD_TYPE;
#if defined(__clang__)
    env["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    env["compiler"] = std::string("gcc ") + __VERSION__;
#else
    env["compiler"] = "unknown";
#endif
    struct utsname u {};
    if (::uname(&u) == 0) env["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
    env["threads"] = threads;
    const engine::DeviceList list = engine::listDevices();
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const auto& d : list.devices) {
        nlohmann::ordered_json e{{"id", d.id}, {"name", d.name}, {"memory_bytes", d.memoryBytes}};
        if (d.id == "cpu") {
            e["threads"] = d.threads;
            e["features"] = d.features;
            env["cpu"] = {{"model", d.name}, {"threads", d.threads}, {"features", d.features}};
        } else {
            e["compute_capability"] = d.features;
        }
        devices.push_back(std::move(e));
    }
    env["devices"] = std::move(devices);
    env["cuda_compiled"] = list.cudaCompiled;
    return env;
}


} // namespace mb::lab
