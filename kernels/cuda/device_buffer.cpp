// CUDA runtime and cuBLAS wrappers behind device_buffer.h (host code; no kernels here).
#include "kernels/cuda/cuda_check.h"


#include <utility>

namespace mb::kernels::cuda {

int deviceCount() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

void setDevice(int index) { MB_CUDA_CHECK(cudaSetDevice(index)); }

DeviceBuffer::DeviceBuffer(size_t bytes) : m_bytes(bytes) {
    if (bytes > 0) MB_CUDA_CHECK(cudaMalloc(&m_ptr, bytes));
}

DeviceBuffer::~DeviceBuffer() {
    if (m_ptr) cudaFree(m_ptr); // no throw from a destructor; a failure here is a driver teardown
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_ptr(std::exchange(other.m_ptr, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (m_ptr) cudaFree(m_ptr);
        m_ptr = std::exchange(other.m_ptr, nullptr);
        m_bytes = std::exchange(other.m_bytes, 0);
    }
    return *this;
}

void copyToDevice(void* dst, const void* src, size_t bytes, Stream stream) {
    if (bytes > 0) MB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
}

void copyToHost(void* dst, const void* src, size_t bytes, Stream stream) {
    if (bytes > 0) MB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
}

void copyOnDevice(void* dst, const void* src, size_t bytes, Stream stream) {
    if (bytes > 0) MB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void fillZero(void* dst, size_t bytes, Stream stream) {
    if (bytes > 0) MB_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream));
}

StreamOwner::StreamOwner() { MB_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }

StreamOwner::~StreamOwner() {
    if (m_stream) cudaStreamDestroy(m_stream);
}

void StreamOwner::synchronize() const { MB_CUDA_CHECK(cudaStreamSynchronize(m_stream)); }

BlasHandle::BlasHandle(Stream stream) {
    MB_CUBLAS_CHECK(cublasCreate(&m_handle));
    try {
        MB_CUBLAS_CHECK(cublasSetStream(m_handle, stream));
    } catch (...) {
        cublasDestroy(m_handle);
        throw;
    }
}

BlasHandle::~BlasHandle() {
    if (m_handle) cublasDestroy(m_handle);
}

void gemmF16(const BlasHandle& blas, const void* w, int64_t rows, int64_t cols, const void* x, int64_t n, float* y) {
    // Column-major view: W row-major (rows, cols) is W^T column-major with ld = cols; x
    // row-major (n, cols) is (cols, n) with ld = cols; y row-major (n, rows) is (rows, n)
    // with ld = rows. So y^T = op_T(W^T) · x^T: m = rows, n = n, k = cols.
    const float alpha = 1.0f, beta = 0.0f;
    MB_CUBLAS_CHECK(cublasGemmEx(blas.get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(n),
                                 static_cast<int>(cols), &alpha, w, CUDA_R_16F, static_cast<int>(cols), x, CUDA_R_16F,
                                 static_cast<int>(cols), &beta, y, CUDA_R_32F, static_cast<int>(rows),
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

Graph::~Graph() { reset(); }

void Graph::reset() {
    if (m_exec) cudaGraphExecDestroy(m_exec);
    m_exec = nullptr;
}

void Graph::begin(Stream stream) {
    reset();
    MB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
}

void Graph::end(Stream stream) {
    cudaGraph_t graph = nullptr;
    MB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    const cudaError_t err = cudaGraphInstantiate(&m_exec, graph, 0);
    cudaGraphDestroy(graph);
    if (err != cudaSuccess) {
        m_exec = nullptr;
        MB_CUDA_CHECK(err);
    }
}

void Graph::abort(Stream stream) noexcept {
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    reset();
}

void Graph::launch(Stream stream) const { MB_CUDA_CHECK(cudaGraphLaunch(m_exec, stream)); }

} // namespace mb::kernels::cuda
