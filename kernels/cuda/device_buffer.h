// Device memory, streams, cuBLAS handles and CUDA graphs as move-only RAII types, with no CUDA headers.
//
// Code compiled by the host compiler (engine/) uses these; only kernels/cuda/*.cu and
// device_buffer.cpp see the CUDA runtime. Every call is checked and throws CudaError with
// the file and line of the failing call. Thread affinity: CUDA's current device is per
// thread, so call setDevice() on the thread that then uses these objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

struct CUstream_st;     // cudaStream_t is CUstream_st*
struct CUgraphExec_st;  // cudaGraphExec_t is CUgraphExec_st*
struct cublasContext;   // cublasHandle_t is cublasContext*

namespace mb::kernels::cuda {

using Stream = CUstream_st*;

// A failed CUDA or cuBLAS call: "file:line: call failed: error name (description)".
class CudaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Devices the runtime sees (0 without a driver or device; never throws).
int deviceCount();
// Makes `index` the calling thread's current device.
void setDevice(int index);

// `bytes` of device memory (cudaMalloc, 256-byte aligned), freed in the destructor.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void* data() const { return m_ptr; }
    template <class T> T* as() const { return static_cast<T*>(m_ptr); }
    size_t bytes() const { return m_bytes; }
    bool empty() const { return m_ptr == nullptr; }

private:
    void* m_ptr = nullptr;
    size_t m_bytes = 0;
};

// Copies (asynchronous on `stream` when the host memory allows; `stream` may be null).
void copyToDevice(void* dst, const void* src, size_t bytes, Stream stream);
void copyToHost(void* dst, const void* src, size_t bytes, Stream stream);
void copyOnDevice(void* dst, const void* src, size_t bytes, Stream stream);
void fillZero(void* dst, size_t bytes, Stream stream);

// A non-blocking stream (one per session), destroyed with the object.
class StreamOwner {
public:
    StreamOwner();
    ~StreamOwner();
    StreamOwner(const StreamOwner&) = delete;
    StreamOwner& operator=(const StreamOwner&) = delete;
    Stream get() const { return m_stream; }
    void synchronize() const; // throws CudaError with any error of the work queued so far

private:
    Stream m_stream = nullptr;
};

// A cuBLAS handle bound to one stream.
class BlasHandle {
public:
    explicit BlasHandle(Stream stream);
    ~BlasHandle();
    BlasHandle(const BlasHandle&) = delete;
    BlasHandle& operator=(const BlasHandle&) = delete;
    cublasContext* get() const { return m_handle; }

private:
    cublasContext* m_handle = nullptr;
};

// y(n, rows) F32 = x(n, cols) F16 · W(rows, cols)^T F16, accumulated in F32 (cublasGemmEx,
// tensor cores). W and x are row-major device arrays of __half; y is row-major.
void gemmF16(const BlasHandle& blas, const void* w, int64_t rows, int64_t cols, const void* x, int64_t n, float* y);

// A captured stream region replayed with one launch (the fast profile's decode step).
// capture(): begin() on a stream, enqueue kernels, end(); launch() replays it. Kernel
// arguments are frozen at capture, so everything that changes per step must live in device
// memory that the caller rewrites before launch().
class Graph {
public:
    Graph() = default;
    ~Graph();
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    void begin(Stream stream);
    void end(Stream stream); // instantiates; on failure the graph stays empty and this throws
    void abort(Stream stream) noexcept; // ends a capture that failed half-way, keeping nothing
    void launch(Stream stream) const;
    bool ready() const { return m_exec != nullptr; }
    void reset();

private:
    CUgraphExec_st* m_exec = nullptr;
};

} // namespace mb::kernels::cuda
