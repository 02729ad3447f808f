// Chooses the vector kernel table for this CPU once.
#include "kernels/cpu/vec.h"

#include "kernels/cpu/cpu_features.h"

namespace mb::kernels {

const VecKernels* avx2VecKernelsUnchecked(); // defined in vec_avx2.cpp

const VecKernels* avx2VecKernels() {
    return cpuFeatures().hasAvx2Set() ? avx2VecKernelsUnchecked() : nullptr;
}

const VecKernels& vecKernels() {
    static const VecKernels& chosen = avx2VecKernels() ? *avx2VecKernels() : portableVecKernels();
    return chosen;
}

} // namespace mb::kernels
