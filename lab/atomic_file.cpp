// Atomic whole-file writes (temporary file, fsync, rename) with the OS's reason on failure.
#include "lab/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace mb::lab {

namespace {

[[noreturn]] void fail(const std::string& path, int err) {
    throw AtomicFileError("cannot write " + path + ": " + std::strerror(err));
}

// Writes all of `bytes` to `fd`; returns 0 or the errno of the first failed write.
int writeAll(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return 0;
}

// Devices and FIFOs: no temporary file can stand in for them.
void writeInPlace(const std::string& path, std::string_view bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) fail(path, errno);
    const int err = writeAll(fd, bytes);
    if (::close(fd) != 0 && err == 0 && errno != EINTR) fail(path, errno);
    if (err != 0) fail(path, err);
}

} // namespace

void writeFileAtomically(const std::string& path, std::string_view bytes) {
    namespace fs = std::filesystem;
    if (path.empty()) throw AtomicFileError("cannot write a file with an empty name");
    std::error_code ec;
    fs::path target = path;
    if (fs::is_symlink(fs::symlink_status(target, ec))) {
        const fs::path resolved = fs::weakly_canonical(target, ec);
        if (!ec) target = resolved;
    }
    struct stat existing {};
    const bool exists = ::stat(target.c_str(), &existing) == 0;
    if (exists && !S_ISREG(existing.st_mode)) {
        if (S_ISDIR(existing.st_mode)) fail(path, EISDIR);
        writeInPlace(path, bytes);
        return;
    }

    // A name no other writer (another thread or process) uses; O_EXCL never follows a planted link.
    static std::atomic<unsigned> counter{0};
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; fd < 0; ++attempt) {
        tmp = target.string() + ".tmp-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter++);
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && (errno != EEXIST || attempt > 100)) fail(path, errno);
    }
    auto abandon = [&](int err) {
        ::close(fd);
        ::unlink(tmp.c_str());
        fail(path, err);
    };
    if (exists && ::fchmod(fd, existing.st_mode & 07777) != 0) abandon(errno);
    if (const int err = writeAll(fd, bytes)) abandon(err);
    // fsync before the rename, so a crash cannot leave the new name on an empty file.
    if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) abandon(errno);
    if (::close(fd) != 0 && errno != EINTR) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(path, err);
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(path, err);
    }
}

} // namespace mb::lab
