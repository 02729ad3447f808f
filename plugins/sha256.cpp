// SHA-256 of a file or of bytes through OpenSSL's EVP interface.
#include "plugins/sha256.h"

#ifdef MODEBENCH_HAVE_OPENSSL
#include <openssl/evp.h>
#endif

#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

namespace mb::plugins {

#ifndef MODEBENCH_HAVE_OPENSSL
std::string sha256File(const std::string& path) {
    throw std::runtime_error("cannot hash " + path + ": this build has no OpenSSL");
}
std::string sha256Hex(std::string_view) {
    throw std::runtime_error("cannot hash: this build has no OpenSSL");
}
#else
namespace {

using Ctx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

Ctx newContext() {
    Ctx ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256 is unavailable");
    return ctx;
}

std::string finishHex(EVP_MD_CTX* ctx) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, digest, &len);
    std::string hex;
    char two[3];
    for (unsigned i = 0; i < len; ++i) {
        std::snprintf(two, sizeof two, "%02x", digest[i]);
        hex += two;
    }
    return hex;
}

} // namespace

std::string sha256Hex(std::string_view bytes) {
    Ctx ctx = newContext();
    if (EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1) throw std::runtime_error("SHA-256 failed");
    return finishHex(ctx.get());
}

std::string sha256File(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    Ctx ctx = newContext();
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        const auto n = static_cast<size_t>(in.gcount());
        if (n > 0 && EVP_DigestUpdate(ctx.get(), buf.data(), n) != 1) throw std::runtime_error("SHA-256 failed");
    }
    if (in.bad()) throw std::runtime_error("error reading " + path);
    return finishHex(ctx.get());
}

#endif

} // namespace mb::plugins
