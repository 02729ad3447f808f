// The GUI tests' main: an offscreen QApplication with throwaway settings, then GoogleTest.
#include "gui/gui_types.h"

#include <QApplication>
#include <QStandardPaths>

#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
    // No display in CI: the offscreen platform renders into memory. QSettings go to a
    // test-only location so that tests never read or write the user's settings.
    setenv("QT_QPA_PLATFORM", "offscreen", 0);
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("ModeBenchTests"));
    QApplication::setApplicationName(QStringLiteral("modebench-tests"));
    mb::gui::registerGuiTypes();
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
