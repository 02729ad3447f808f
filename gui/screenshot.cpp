// The screenshot driver: page-specific preparation, waiting on signals, QWidget::grab.
#include "gui/screenshot.h"

#include "gui/benchmark_page.h"
#include "gui/history_page.h"
#include "gui/main_window.h"
#include "gui/migration_page.h"
#include "gui/models_page.h"
#include "gui/report_page.h"
#include "gui/selection_page.h"
#include "gui/playground_page.h"
#include "gui/plugins_page.h"
#include "gui/workload_designer.h"

#include <QApplication>
#include <QEventLoop>
#include <QFileInfo>
#include <QSpinBox>
#include <QTimer>

#include <algorithm>
#include <cstdio>

namespace mb::gui {

namespace {

// Runs the event loop until `done` is called or the timeout passes; true when done.
template <typename Setup> bool waitFor(int timeoutMs, Setup setup) {
    QEventLoop loop;
    bool finished = false;
    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    auto done = [&] {
        finished = true;
        loop.quit();
    };
    std::vector<QMetaObject::Connection> connections = setup(done);
    timer.start(timeoutMs);
    if (!finished) loop.exec();
    for (auto& c : connections) QObject::disconnect(c);
    return finished;
}

void fail(const QString& message) {
    std::fprintf(stderr, "modebench: screenshot: %s\n", message.toLocal8Bit().constData());
}

// Decides on the newest run with two candidates (Selection page), with the store's load-sweep
// runs (tagged "sweep") as capacity points; true when saved.
bool decideNewest(MainWindow& window, int timeoutMs, QString& error) {
    QStringList sweep;
    qint64 newest = 0; // the newest run with two candidates that is not a sweep point
    const bool listed = waitFor(timeoutMs, [&](auto done) {
        auto c = std::vector{QObject::connect(window.store(), &StoreClient::runsListed,
                                              [&, done](qint64, const RunListingList& runs) {
                                                  sweep.clear(); // the list may come more than once
                                                  newest = 0;
                                                  for (const auto& r : runs) {
                                                      const bool isSweep = std::find(r.tags.begin(), r.tags.end(),
                                                                                     "sweep") != r.tags.end();
                                                      if (isSweep) sweep << QString::number(r.id);
                                                      else if (r.candidates.size() == 2 && r.id > newest)
                                                          newest = r.id;
                                                  }
                                                  done();
                                              })};
        window.selection()->refreshRuns();
        return c;
    });
    if (!listed) return false;
    window.selection()->setRepeats(newest > 0 ? sweep.join(QStringLiteral(", ")) : QString());
    QCoreApplication::processEvents();
    return waitFor(timeoutMs, [&](auto done) {
        auto c = std::vector{QObject::connect(window.selection(), &SelectionPage::selectionSaved, done),
                             QObject::connect(window.store(), &StoreClient::failed, [&, done](qint64, const QString& m) {
                                 error = m;
                                 done();
                             })};
        window.selection()->decide(newest);
        return c;
    });
}

// The approvals listed, the sandbox probed and, run from the repository, the sample script
// audited beside its chain file.
bool preparePlugins(MainWindow& window, int timeoutMs) {
    PluginsPage* p = window.plugins();
    bool ok = waitFor(timeoutMs, [&](auto done) {
        auto c = std::vector{QObject::connect(p, &PluginsPage::approvalsListed, done),
                             QObject::connect(window.store(), &StoreClient::failed, done)};
        p->refresh();
        return c;
    });
    const QString script = QStringLiteral("docs/plugins/title_case.py");
    if (ok && QFileInfo::exists(script)) {
        p->showChain(QStringLiteral("docs/plugins/script.json"));
        ok = waitFor(timeoutMs, [&](auto done) {
            auto c = std::vector{QObject::connect(window.store(), &StoreClient::scriptAudited, done),
                                 QObject::connect(window.store(), &StoreClient::failed, done)};
            p->auditFile(script);
            return c;
        });
    }
    return ok;
}

} // namespace

int takeScreenshot(MainWindow& window, const QString& page, const QString& file, int timeoutMs, const QString& prompts) {
    if (!MainWindow::pageKeys().contains(page)) {
        fail(QStringLiteral("unknown page '%1' (one of %2)").arg(page, MainWindow::pageKeys().join(QStringLiteral(", "))));
        return 1;
    }
    window.resize(1500, 950);
    window.show();
    window.showPage(page);
    QString error;
    // The store opens asynchronously at start; History needs it (a failure shows on the page).
    if (window.store()->path().isEmpty())
        waitFor(timeoutMs, [&](auto done) {
            return std::vector{QObject::connect(&window, &MainWindow::storeReady, done),
                               QObject::connect(&window, &MainWindow::storeFailed, done)};
        });
    bool ok = true;
    if (page == QLatin1String("playground") || page == QLatin1String("benchmark") || page == QLatin1String("models")) {
        if (window.models()->currentPath().isEmpty() &&
            !waitFor(timeoutMs, [&](auto done) {
                return std::vector{QObject::connect(window.models(), &ModelsPage::modelInspected, done),
                                   QObject::connect(window.models(), &ModelsPage::inspectFailed,
                                                    [&, done](const QString& m) {
                                                        error = m;
                                                        done();
                                                    })};
            })) {
            fail(QStringLiteral("no model: pass --model FILE or set a default model"));
            return 1;
        }
        if (!error.isEmpty()) {
            fail(error);
            return 1;
        }
    }
    if (page == QLatin1String("playground")) {
        ok = waitFor(timeoutMs, [&](auto done) {
            auto& c = window.playground()->controller();
            auto conns = std::vector{QObject::connect(&c, &PlaygroundController::finished, done),
                                     QObject::connect(&c, &PlaygroundController::failed, [&, done](const QString& m) {
                                         error = m;
                                         done();
                                     })};
            window.playground()->runBoth();
            return conns;
        });
    } else if (page == QLatin1String("benchmark")) {
        // PRODUCT.md's shared-prefix shape, small enough for a screenshot: 64 requests a side.
        lab::WorkloadSpec spec = *lab::builtinWorkload("shared-prefix");
        spec.sharedPrefix = {4, 16, 256, 32};
        spec.output.kind = lab::LengthDist::Kind::Fixed;
        spec.output.a = 32;
        spec.output.min = 1;
        spec.output.max = 32;
        spec.arrival.kind = lab::ArrivalSpec::Kind::Closed;
        spec.arrival.concurrency = 4;
        window.benchmark()->designer()->setSpec(spec);
        // With the precision A/B rows beside the latency figures (4 prompts a side).
        if (auto* p = window.benchmark()->findChild<QSpinBox*>(QStringLiteral("benchmark.precision_prompts"))) p->setValue(4);
        ok = waitFor(timeoutMs, [&](auto done) {
            auto& c = window.benchmark()->controller();
            auto conns = std::vector{QObject::connect(&c, &BenchmarkController::finished, done),
                                     QObject::connect(&c, &BenchmarkController::failed, [&, done](const QString& m) {
                                         error = m;
                                         done();
                                     })};
            window.benchmark()->run();
            return conns;
        });
    } else if (page == QLatin1String("models")) {
        // The open model in F32 against itself at q4_0, on the built-in sentences.
        ok = waitFor(timeoutMs, [&](auto done) {
            auto conns = std::vector{QObject::connect(window.models(), &ModelsPage::precisionCompared, done),
                                     QObject::connect(window.engine(), &EngineBackend::jobFailed,
                                                      [&, done](qint64, const QString& m) {
                                                          error = m;
                                                          done();
                                                      })};
            window.models()->comparePrecision({}, QStringLiteral("q4_0"), {});
            return conns;
        });
    } else if (page == QLatin1String("history")) {
        ok = waitFor(timeoutMs, [&](auto done) {
            auto conns = std::vector{QObject::connect(window.store(), &StoreClient::runsListed,
                                                      [&, done](qint64, const RunListingList& runs) {
                                                          if (runs.empty()) return done();
                                                          window.history()->openRun(runs.front().id);
                                                      }),
                                     QObject::connect(window.history(), &HistoryPage::runOpened, done),
                                     QObject::connect(window.store(), &StoreClient::failed,
                                                      [&, done](qint64, const QString& m) {
                                                          error = m;
                                                          done();
                                                      })};
            window.history()->refresh();
            return conns;
        });
    }
    if (page == QLatin1String("plugins")) ok = preparePlugins(window, timeoutMs);
    if (page == QLatin1String("selection") || page == QLatin1String("migration")) {
        ok = decideNewest(window, timeoutMs, error);
    }
    if (ok && error.isEmpty() && page == QLatin1String("migration")) {
        // Walk the flowchart: A (with the prompt corpus), D, E, F, until it stops at H, I or C.
        MigrationPage* m = window.migration();
        ok = waitFor(timeoutMs, [&](auto done) { // the selection's run loads, the walk starts at A
            return std::vector{QObject::connect(m, &MigrationPage::stateChanged, [m, done] {
                if (m->state()) done();
            })};
        });
        for (int step = 0; ok && step < 8 && m->state() && !m->state()->finished() &&
                           m->state()->node != lab::MigrationNode::I;
             ++step) {
            const auto before = m->state()->path.size();
            ok = waitFor(timeoutMs, [&](auto done) {
                auto c = std::vector{QObject::connect(m, &MigrationPage::stateChanged, [m, before, done] {
                                         if (m->state()->path.size() != before) done();
                                     }),
                                     QObject::connect(window.engine(), &EngineBackend::jobFailed,
                                                      [&, done](qint64, const QString& msg) {
                                                          error = msg;
                                                          done();
                                                      })};
                m->runStep(prompts);
                if (m->state()->path.size() != before) done();
                return c;
            });
            if (!error.isEmpty()) break;
        }
    }
    if (ok && error.isEmpty() && page == QLatin1String("report")) {
        SelectionList selections;
        ok = waitFor(timeoutMs, [&](auto done) {
            auto c = std::vector{QObject::connect(window.store(), &StoreClient::selectionsListed,
                                                  [&, done](qint64, const SelectionList& l) {
                                                      selections = l;
                                                      done();
                                                  })};
            window.report()->refreshLists();
            return c;
        });
        qint64 selectionId = 0;
        for (const auto& sel : selections)
            if (!sel.migrationJson.empty()) {
                selectionId = sel.id;
                break;
            }
        if (selectionId == 0 && !selections.empty()) selectionId = selections.front().id;
        if (ok && selectionId == 0) error = QStringLiteral("no saved selection: take the selection screenshot first");
        if (ok && error.isEmpty())
            ok = waitFor(timeoutMs, [&](auto done) {
                auto c = std::vector{QObject::connect(window.report(), &ReportPage::reportReady, done),
                                     QObject::connect(window.store(), &StoreClient::failed,
                                                      [&, done](qint64, const QString& msg) {
                                                          error = msg;
                                                          done();
                                                      })};
                window.report()->build(0, selectionId);
                return c;
            });
    }
    if (!ok) {
        fail(QStringLiteral("timed out preparing page '%1'").arg(page));
        return 1;
    }
    if (!error.isEmpty()) {
        fail(error);
        return 1;
    }
    // Let the charts' redraw timer and the layouts catch up before grabbing.
    waitFor(600, [](auto) { return std::vector<QMetaObject::Connection>{}; });
    if (!window.grab().save(file, "PNG")) {
        fail(QStringLiteral("cannot write %1").arg(file));
        return 1;
    }
    return 0;
}

} // namespace mb::gui
