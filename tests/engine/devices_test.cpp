// Device names, the fallback to the CPU, and backend selection: the CPU side of the CUDA backend.
#include "engine/devices.h"
#include "engine/forward.h"
#include "engine/forward_backend.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace mb::engine;

namespace {

DeviceList fakeList(bool compiled, int gpus) {
    DeviceList list;
    list.cudaCompiled = compiled;
    list.devices.push_back({"cpu", "test CPU", 1, 1, ""});
    for (int i = 0; i < gpus; ++i) list.devices.push_back({"cuda:" + std::to_string(i), "test GPU", 1, 0, "sm_90"});
    if (gpus == 0) list.cudaNote = compiled ? "no CUDA-capable device is detected" : "this build has no CUDA backend";
    return list;
}

} // namespace

TEST(Devices, ParsesCpuAndCudaNames) {
    EXPECT_EQ(parseDevice("cpu"), Device{});
    EXPECT_EQ(parseDevice("cuda"), (Device{Device::Kind::Cuda, 0}));
    EXPECT_EQ(parseDevice("cuda:3"), (Device{Device::Kind::Cuda, 3}));
    EXPECT_EQ(parseDevice("cuda:12").id(), "cuda:12");
    for (const char* bad : {"", "gpu", "cuda:", "cuda:-1", "cuda:1x", "CPU", "cuda:0:1", " cpu"})
        EXPECT_THROW(parseDevice(bad), std::invalid_argument) << bad;
}

TEST(Devices, CpuStaysCpuWithoutNote) {
    const DeviceChoice c = resolveDevice(Device{}, fakeList(true, 2));
    EXPECT_EQ(c.device, Device{});
    EXPECT_TRUE(c.note.empty());
}

TEST(Devices, CudaWithoutDeviceFallsBackToCpuWithNote) {
    const Device want{Device::Kind::Cuda, 0};
    const DeviceChoice none = resolveDevice(want, fakeList(true, 0));
    EXPECT_EQ(none.device, Device{});
    EXPECT_NE(none.note.find("no CUDA device"), std::string::npos) << none.note;
    EXPECT_NE(none.note.find("using the CPU"), std::string::npos) << none.note;
    const DeviceChoice notBuilt = resolveDevice(want, fakeList(false, 0));
    EXPECT_EQ(notBuilt.device, Device{});
    EXPECT_NE(notBuilt.note.find("no CUDA backend"), std::string::npos) << notBuilt.note;
}

TEST(Devices, CudaIndexThatDoesNotExistIsAnError) {
    try {
        resolveDevice(Device{Device::Kind::Cuda, 7}, fakeList(true, 1));
        FAIL() << "cuda:7 on a one-GPU machine was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("cuda:7 does not exist"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
    }
    EXPECT_EQ(resolveDevice(Device{Device::Kind::Cuda, 1}, fakeList(true, 2)).device,
              (Device{Device::Kind::Cuda, 1}));
}

TEST(Devices, ThisMachineResolvesEveryCudaRequestSomehow) {
    // On a machine without a GPU (CI) every cuda request becomes the CPU with a note; with
    // GPUs, cuda:0 is one of them. Never an exception for cuda:0.
    const DeviceChoice c = resolveDevice("cuda:0");
    const DeviceList list = listDevices();
    if (list.devices.size() == 1) {
        EXPECT_EQ(c.device, Device{});
        EXPECT_FALSE(c.note.empty());
    } else {
        EXPECT_EQ(c.device, (Device{Device::Kind::Cuda, 0}));
    }
}

TEST(ForwardBackend, CpuDeviceGivesTheCpuForwardWithHostKv) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto model = LlamaModel::load(path.string());
    mb::kernels::ThreadPool pool(1);
    const auto backend = makeForwardBackend(*model, pool, {}, Device{});
    EXPECT_NE(dynamic_cast<Forward*>(backend.get()), nullptr);
    EXPECT_EQ(backend->kvStorage(), KvStorage::Host);
    EXPECT_EQ(backend->device(), Device{});
}

TEST(ForwardBackend, MissingCudaDeviceIsRefusedByTheFactory) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto model = LlamaModel::load(path.string());
    mb::kernels::ThreadPool pool(1);
    // Not resolved first: the factory itself must refuse a device that is not there.
    EXPECT_THROW(makeForwardBackend(*model, pool, {}, Device{Device::Kind::Cuda, 999}), std::invalid_argument);
}

TEST(ForwardBackend, CpuRefusesDeviceOnlyKv) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto model = LlamaModel::load(path.string());
    mb::kernels::ThreadPool pool(1);
    Forward forward(*model, pool);
    KvCache device(model->config(), 2, 16, KvStorage::Device);
    KvCache host(model->config(), 2, 16);
    EXPECT_EQ(device.bytes(), host.bytes()); // the same geometry, wherever it lives
    std::vector<int32_t> table(2);
    std::iota(table.begin(), table.end(), 0);
    std::vector<float> logits(static_cast<size_t>(model->config().vocabSize));
    const int32_t tokens[1] = {1};
    EXPECT_THROW(forward.runSequence(tokens, 0, device, table, logits.data()), ModelError);
    EXPECT_NO_THROW(forward.runSequence(tokens, 0, host, table, logits.data()));
}
