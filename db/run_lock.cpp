// flock(2) sidecar files that mark a run's writer as alive.
#include "db/run_lock.h"

#include "db/sqlite.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace mb::db {

std::string runLockPath(const std::string& dbPath, int64_t runId) {
    return dbPath + ".lock-" + std::to_string(runId);
}

RunLock RunLock::acquire(const std::string& dbPath, int64_t runId) {
    const std::string path = runLockPath(dbPath, runId);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        throw DbError("cannot create the run lock " + path + ": " +
                      std::generic_category().message(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd);
        throw DbError("cannot lock " + path + ": " +
                      (err == EWOULDBLOCK ? std::string("another writer holds it")
                                          : std::generic_category().message(err)));
    }
    return RunLock(fd, path);
}

bool RunLock::isHeld(const std::string& dbPath, int64_t runId, RunLock* takeIfFree) {
    const std::string path = runLockPath(dbPath, runId);
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return errno != ENOENT; // unreadable: assume a writer, never mark a live run
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd);
        return err == EWOULDBLOCK || err == EINTR;
    }
    if (takeIfFree) {
        *takeIfFree = RunLock(fd, path);
    } else {
        ::close(fd);
    }
    return false;
}

RunLock::RunLock(RunLock&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = std::exchange(other.m_fd, -1);
        m_path = std::move(other.m_path);
    }
    return *this;
}

RunLock::~RunLock() {
    if (m_fd >= 0) ::close(m_fd);
}

void RunLock::releaseAndRemove() {
    if (m_fd < 0) return;
    ::unlink(m_path.c_str());
    ::close(m_fd);
    m_fd = -1;
}

} // namespace mb::db
