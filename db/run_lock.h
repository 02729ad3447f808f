// Telling a live writer from a dead one: an flock(2)-held sidecar file `DB.lock-RUNID` per running
// run.
#pragma once

#include <cstdint>
#include <string>

namespace mb::db {

// The sidecar lock file of run `runId` of the database at `dbPath`.
std::string runLockPath(const std::string& dbPath, int64_t runId);

// An exclusive flock(2) on `DB.lock-RUNID`, held for as long as a writer writes the run.
// The kernel drops the lock when the process dies however it dies (SIGKILL included), so
// a run whose row says `running` but whose lock can be taken has lost its writer.
//
// flock locks belong to the open file description, not the process: a second open of the
// file in the SAME process conflicts too, so a store opened beside a live sink in one
// process sees that sink's run as live (fcntl locks would not). The descriptor is
// O_CLOEXEC, so exec'd children do not inherit the lock; a fork()ed child that never
// execs shares it. Advisory and local: on network file systems flock may not be shared
// between machines.
//
// Move-only; the destructor releases without unlinking (as a crash would).
class RunLock {
public:
    RunLock() = default;
    // Creates the file if needed and takes the lock; throws DbError when it cannot, or
    // when another descriptor holds it (a live writer).
    static RunLock acquire(const std::string& dbPath, int64_t runId);

    // Whether a writer holds the lock of run `runId` right now. A missing file means no
    // writer. When `takeIfFree` is set and the lock is free, this object takes it (so the
    // caller can mark the run and remove the file before anyone else looks).
    static bool isHeld(const std::string& dbPath, int64_t runId, RunLock* takeIfFree = nullptr);

    RunLock(RunLock&& other) noexcept;
    RunLock& operator=(RunLock&& other) noexcept;
    RunLock(const RunLock&) = delete;
    RunLock& operator=(const RunLock&) = delete;
    ~RunLock();

    bool held() const { return m_fd >= 0; }
    const std::string& path() const { return m_path; }
    // Unlinks the file while still holding the lock, then releases it.
    void releaseAndRemove();

private:
    RunLock(int fd, std::string path) : m_fd(fd), m_path(std::move(path)) {}
    int m_fd = -1;
    std::string m_path;
};

} // namespace mb::db
