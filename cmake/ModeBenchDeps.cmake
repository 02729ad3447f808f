# Third-party dependencies, found once for every folder, with switches for a build that has none of them.
#
# A machine with Debian's -dev packages finds everything. A machine with only a compiler,
# CMake and ninja (the GPU machine of tests/gpu/device_checks.sh) builds the engine, the CLI
# and the gpu tests with -DMODEBENCH_STORE=OFF -DMODEBENCH_HTTP=OFF -DMODEBENCH_GUI=OFF and
# MODEBENCH_DEPS_DIR pointing at copies of the header-only libraries and GoogleTest's
# sources (tests/gpu/prepare_carry.sh makes that folder: include/{nlohmann,CLI}, googletest/).
set(MODEBENCH_DEPS_DIR "" CACHE PATH
    "Carried dependencies used when the system has none: include/ (nlohmann, CLI11) and googletest/ sources")
set(MODEBENCH_STORE AUTO CACHE STRING "Build the SQLite run store (db/): AUTO (when SQLite 3.38+ is found), ON or OFF")
set_property(CACHE MODEBENCH_STORE PROPERTY STRINGS AUTO ON OFF)
set(MODEBENCH_HTTP AUTO CACHE STRING
    "Build HTTP (serve, remote targets) with cpp-httplib: AUTO (when found), ON or OFF")
set_property(CACHE MODEBENCH_HTTP PROPERTY STRINGS AUTO ON OFF)

# A header-only library from the system, else from MODEBENCH_DEPS_DIR/include as `target`.
function(modebench_header_only target package header)
    if(TARGET ${target})
        return()
    endif()
    find_package(${package} ${ARGN} QUIET)
    if(TARGET ${target})
        return()
    endif()
    if(MODEBENCH_DEPS_DIR AND EXISTS "${MODEBENCH_DEPS_DIR}/include/${header}")
        add_library(${target} INTERFACE IMPORTED GLOBAL)
        target_include_directories(${target} INTERFACE "${MODEBENCH_DEPS_DIR}/include")
        message(STATUS "${package}: using the carried copy in ${MODEBENCH_DEPS_DIR}/include")
    else()
        message(FATAL_ERROR "${package} not found: install its Debian -dev package (scripts/setup.sh does), "
                            "or set MODEBENCH_DEPS_DIR to a folder made by tests/gpu/prepare_carry.sh")
    endif()
endfunction()

modebench_header_only(nlohmann_json::nlohmann_json nlohmann_json nlohmann/json.hpp 3)
modebench_header_only(CLI11::CLI11 CLI11 CLI/CLI.hpp CONFIG)

# SQLite: the run store.
set(MODEBENCH_HAVE_STORE OFF)
if(NOT MODEBENCH_STORE STREQUAL "OFF")
    find_package(SQLite3 3.38 QUIET)
    if(SQLite3_FOUND)
        set(MODEBENCH_HAVE_STORE ON)
    elseif(MODEBENCH_STORE STREQUAL "ON")
        message(FATAL_ERROR "MODEBENCH_STORE=ON but SQLite 3.38+ was not found (libsqlite3-dev)")
    else()
        message(STATUS "SQLite not found: no run store (compare does not store runs; runs, select, report, migrate absent)")
    endif()
endif()

# cpp-httplib (Debian's is a shared library with a header): serve and remote targets.
set(MODEBENCH_HAVE_HTTP OFF)
if(NOT MODEBENCH_HTTP STREQUAL "OFF")
    find_package(PkgConfig QUIET)
    if(PkgConfig_FOUND)
        pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET GLOBAL cpp-httplib)
    endif()
    if(TARGET PkgConfig::HTTPLIB)
        set(MODEBENCH_HAVE_HTTP ON)
    elseif(MODEBENCH_HTTP STREQUAL "ON")
        message(FATAL_ERROR "MODEBENCH_HTTP=ON but cpp-httplib was not found (libcpp-httplib-dev, pkg-config)")
    else()
        message(STATUS "cpp-httplib not found: no serve command and no remote targets")
    endif()
endif()

# OpenSSL: SHA-256 of model files for stored runs (lab/sha256.cpp).
find_package(OpenSSL QUIET COMPONENTS Crypto)
set(MODEBENCH_HAVE_OPENSSL ${OPENSSL_FOUND})
if(MODEBENCH_HAVE_STORE AND NOT MODEBENCH_HAVE_OPENSSL)
    message(FATAL_ERROR "the run store hashes model files with OpenSSL: install libssl-dev or use -DMODEBENCH_STORE=OFF")
endif()

# RE2 (libre2-dev): the regex_replace plugin's linear-time matcher. Without it that plugin
# is a clear error at load. libseccomp (libseccomp-dev): the script plugins' system-call
# filter; without it the sandbox keeps its other layers and says which one is missing.
set(MODEBENCH_HAVE_RE2 OFF)
set(MODEBENCH_HAVE_SECCOMP OFF)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
    pkg_check_modules(RE2 QUIET IMPORTED_TARGET GLOBAL re2)
    pkg_check_modules(SECCOMP QUIET IMPORTED_TARGET GLOBAL libseccomp)
endif()
if(TARGET PkgConfig::RE2)
    set(MODEBENCH_HAVE_RE2 ON)
else()
    message(STATUS "RE2 not found (libre2-dev): the regex_replace plugin is not built")
endif()
if(TARGET PkgConfig::SECCOMP)
    set(MODEBENCH_HAVE_SECCOMP ON)
else()
    message(STATUS "libseccomp not found (libseccomp-dev): script plugins run without a system-call filter only with --allow-unsandboxed")
endif()

# stb_image (libstb-dev; Debian builds the implementation into libstb): PNG/JPEG decoding for
# image input, the decoder llama.cpp's clip.cpp uses. Without it the engine still builds and
# decodeImage() says this build has no image decoder (the GPU machine has no -dev packages).
set(MODEBENCH_HAVE_STB OFF)
if(PkgConfig_FOUND)
    pkg_check_modules(STB QUIET IMPORTED_TARGET GLOBAL stb)
endif()
if(TARGET PkgConfig::STB)
    set(MODEBENCH_HAVE_STB ON)
else()
    message(STATUS "stb not found (libstb-dev): no image decoding (image input gives a clear error)")
endif()
