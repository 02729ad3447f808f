# Warnings, sanitizers and the per-target defaults every ModeBench target shares.
add_library(modebench_options INTERFACE)
target_compile_options(modebench_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>)
if(MODEBENCH_SANITIZE)
    target_compile_options(modebench_options INTERFACE
        $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
    target_link_options(modebench_options INTERFACE -fsanitize=address,undefined)
endif()
target_include_directories(modebench_options INTERFACE ${PROJECT_SOURCE_DIR})
