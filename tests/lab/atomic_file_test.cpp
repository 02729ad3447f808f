// writeFileAtomically: the whole file or nothing; old contents kept on failure, no temporary left.
#include "lab/atomic_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using mb::lab::AtomicFileError;
using mb::lab::writeFileAtomically;

namespace {

class AtomicFile : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("mb_atomic_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    std::string path(const std::string& name) const { return (m_dir / name).string(); }
    static std::string slurp(const std::string& p) {
        std::ifstream in(p, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    std::vector<std::string> names() const {
        std::vector<std::string> n;
        for (const auto& e : fs::directory_iterator(m_dir))
            n.push_back(e.path().filename().string());
        std::sort(n.begin(), n.end());
        return n;
    }

    fs::path m_dir;
};

} // namespace

TEST_F(AtomicFile, WritesNewFilesAndReplacesOldOnesKeepingTheirMode) {
    const std::string p = path("out.txt");
    writeFileAtomically(p, "first\n");
    EXPECT_EQ(slurp(p), "first\n");
    ::chmod(p.c_str(), 0640);
    writeFileAtomically(p, std::string(100000, 'x'));
    EXPECT_EQ(slurp(p), std::string(100000, 'x'));
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    writeFileAtomically(p, "");
    EXPECT_EQ(slurp(p), "");
    EXPECT_EQ(names(), std::vector<std::string>{"out.txt"});
}

TEST_F(AtomicFile, WritesThroughASymlinkAndIntoDevices) {
    const std::string target = path("real.txt"), link = path("link.txt");
    writeFileAtomically(target, "old");
    fs::create_symlink(target, link);
    writeFileAtomically(link, "new");
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(slurp(target), "new");
    EXPECT_NO_THROW(writeFileAtomically("/dev/null", "discarded"));
    EXPECT_EQ(names(), (std::vector<std::string>{"link.txt", "real.txt"}));
}

TEST_F(AtomicFile, FailuresNameThePathAndTheReason) {
    try {
        writeFileAtomically(path("no/such/dir/out.txt"), "x");
        FAIL() << "wrote into a missing directory";
    } catch (const AtomicFileError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot write " + path("no/such/dir/out.txt") + ": No such file or directory");
    }
    EXPECT_THROW(writeFileAtomically(m_dir.string(), "x"), AtomicFileError); // a directory
    try {
        writeFileAtomically("/dev/full", "x");
        FAIL() << "/dev/full accepted a write";
    } catch (const AtomicFileError& e) {
        EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos)
            << e.what();
    }
}

// A write that fails part-way (here the file size limit; a full disk alike) keeps the old
// contents and leaves no temporary file.
TEST_F(AtomicFile, AWriteFailingPartWayKeepsTheOldFile) {
    const std::string p = path("report.html");
    writeFileAtomically(p, "previous report\n");
    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
    auto* oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = old;
    limited.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
    std::string what;
    try {
        writeFileAtomically(p, std::string(1 << 20, 'r'));
    } catch (const AtomicFileError& e) {
        what = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, oldHandler);
    EXPECT_EQ(what, "cannot write " + p + ": File too large");
    EXPECT_EQ(slurp(p), "previous report\n");
    EXPECT_EQ(names(), std::vector<std::string>{"report.html"});
}
