// modebench: the desktop workbench's entry point (options, settings, the main window).
#include "gui/app_settings.h"
#include "gui/gui_types.h"
#include "gui/main_window.h"
#include "gui/playground_page.h"
#include "gui/screenshot.h"
#include "gui/store_worker.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("ModeBench"));
    QApplication::setApplicationName(QStringLiteral("modebench"));
    QApplication::setApplicationVersion(QStringLiteral(MODEBENCH_VERSION));
    mb::gui::registerGuiTypes();

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("ModeBench: run fast and regular serving modes side by side, chart them, keep every run."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption model(QStringLiteral("model"), QStringLiteral("GGUF model to start with (this session only)."),
                                   QStringLiteral("FILE"));
    const QCommandLineOption db(QStringLiteral("db"), QStringLiteral("Run database to use (this session only)."),
                                QStringLiteral("PATH"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Render page PAGE to the PNG file given as the first positional argument and exit. Pages: ") +
            mb::gui::MainWindow::pageKeys().join(QStringLiteral(", ")) + QStringLiteral("."),
        QStringLiteral("PAGE"));
    const QCommandLineOption prompts(QStringLiteral("prompts"),
                                     QStringLiteral("With --screenshot migration: the prompt corpus node A scans."),
                                     QStringLiteral("FILE"));
    const QCommandLineOption mmproj(
        QStringLiteral("mmproj"),
        QStringLiteral("Vision encoder (llava mmproj GGUF) of both Playground candidates (this session only)."),
        QStringLiteral("FILE"));
    const QCommandLineOption image(QStringLiteral("image"),
                                   QStringLiteral("A PNG or JPEG the Playground's prompt carries (repeatable)."),
                                   QStringLiteral("FILE"));
    parser.addOption(prompts);
    parser.addOption(mmproj);
    parser.addOption(image);
    parser.addOption(model);
    parser.addOption(db);
    parser.addOption(screenshot);
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("With --screenshot: the PNG to write."));
    parser.process(app);

    mb::gui::AppSettings settings = mb::gui::AppSettings::load();
    if (parser.isSet(db)) settings.databasePath = parser.value(db);
    if (parser.isSet(model)) {
        const QString path = parser.value(model);
        if (!QFileInfo(path).isReadable()) {
            std::fprintf(stderr, "modebench: cannot read model file %s\n", path.toLocal8Bit().constData());
            return 2;
        }
        settings.defaultModel = path;
    }
    mb::gui::MainWindow window(settings);
    if (parser.isSet(mmproj)) window.playground()->setMmprojPath(parser.value(mmproj));
    if (const QStringList refused = window.playground()->addImages(parser.values(image)); !refused.isEmpty()) {
        std::fprintf(stderr, "modebench: %s\n", refused.join(QStringLiteral("; ")).toLocal8Bit().constData());
        return 2;
    }
    if (parser.isSet(screenshot)) {
        if (parser.positionalArguments().size() != 1) {
            std::fprintf(stderr, "modebench: --screenshot PAGE needs exactly one FILE argument\n");
            return 2;
        }
        return mb::gui::takeScreenshot(window, parser.value(screenshot), parser.positionalArguments().front(), 600000,
                                       parser.value(prompts));
    }
    window.resize(1400, 900);
    window.show();
    return QApplication::exec();
}
