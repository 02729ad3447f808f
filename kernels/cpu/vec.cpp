// Chooses the vector kernel table for this CPU once.
#include "kernels/cpu/vec.h"

#include "kernels/cpu/cpu_features.h"

namespace mb::kernels {

const VecKernels* avx2VecKernelsUnchecked();   // defined in vec_avx2.cpp
const VecKernels* avx512VecKernelsUnchecked(); // defined in vec_avx512.cpp

const VecKernels* avx2VecKernels() {
    return cpuFeatures().hasAvx2Set() ? avx2VecKernelsUnchecked() : nullptr;
}

const VecKernels* avx512VecKernels() {
    return cpuFeatures().hasAvx512Set() ? avx512VecKernelsUnchecked() : nullptr;
}

std::vector<const VecKernels*> availableVecKernels() {
    std::vector<const VecKernels*> v = {&portableVecKernels()};
    if (avx2VecKernels()) v.push_back(avx2VecKernels());
    if (avx512VecKernels()) v.push_back(avx512VecKernels());
    return v;
}

const VecKernels& vecKernels() {
    static const VecKernels& chosen = *availableVecKernels().back();
    return chosen;
}

} // namespace mb::kernels
