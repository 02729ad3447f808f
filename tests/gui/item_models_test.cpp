// Every item model under QAbstractItemModelTester, before and after data is swapped in.
#include "gui/run_table_model.h"
#include "gui/summary_table_model.h"
#include "gui/tensor_table_model.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>

#include <gtest/gtest.h>

#include <cmath>

namespace mb::gui {
namespace {

using Tester = QAbstractItemModelTester;

db::RunListing listing(int64_t id, const std::string& name, lab::RunStatus status) {
    db::RunListing r;
    r.id = id;
    r.createdAt = "2026-11-30T03:00:0" + std::to_string(id) + "Z";
    r.name = name;
    r.tags = {"nightly", "cpu"};
    r.status = status;
    r.candidates = {{1, "a", "fast", "embedded", "/m/x.gguf"}, {2, "b", "regular", "embedded", "/m/x.gguf"}};
    return r;
}

TEST(RunTableModel, PassesModelTesterThroughResets) {
    RunTableModel model;
    Tester tester(&model, Tester::FailureReportingMode::Fatal);
    EXPECT_EQ(model.rowCount(), 0);
    model.setRuns({listing(3, "fast vs regular", lab::RunStatus::Complete), listing(7, "chat", lab::RunStatus::Interrupted)});
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.columnCount(), RunTableModel::ColumnCount);
    EXPECT_EQ(model.data(model.index(1, RunTableModel::Status)).toString(), QStringLiteral("interrupted"));
    EXPECT_EQ(model.data(model.index(0, RunTableModel::Tags)).toString(), QStringLiteral("nightly, cpu"));
    EXPECT_EQ(model.data(model.index(0, RunTableModel::Profiles)).toString(), QStringLiteral("a: fast, b: regular"));
    EXPECT_EQ(model.data(model.index(0, RunTableModel::Model)).toString(), QStringLiteral("x.gguf"));
    EXPECT_EQ(model.runIdAt(1), 7);
    EXPECT_EQ(model.runIdAt(5), 0);
    model.setRuns({});
    EXPECT_EQ(model.rowCount(), 0);
}

TEST(RunTableModel, SortsIdsNumericallyAndFiltersAnyColumn) {
    RunTableModel model;
    model.setRuns({listing(9, "nine", lab::RunStatus::Complete), listing(10, "ten", lab::RunStatus::Complete),
                   listing(2, "two", lab::RunStatus::Failed)});
    QSortFilterProxyModel proxy;
    Tester tester(&proxy, Tester::FailureReportingMode::Fatal);
    proxy.setSourceModel(&model);
    proxy.setSortRole(RunTableModel::SortRole);
    proxy.sort(RunTableModel::Id, Qt::DescendingOrder);
    EXPECT_EQ(proxy.data(proxy.index(0, 0), RunTableModel::RunIdRole).toLongLong(), 10); // not "9" > "10"
    EXPECT_EQ(proxy.data(proxy.index(2, 0), RunTableModel::RunIdRole).toLongLong(), 2);
    proxy.setFilterKeyColumn(-1);
    proxy.setFilterFixedString(QStringLiteral("failed"));
    ASSERT_EQ(proxy.rowCount(), 1);
    EXPECT_EQ(proxy.data(proxy.index(0, 0), RunTableModel::RunIdRole).toLongLong(), 2);
}

TEST(SummaryTableModel, PassesModelTesterAndComputesRatio) {
    SummaryTableModel model;
    Tester tester(&model, Tester::FailureReportingMode::Fatal);
    lab::RunSummary a, b;
    a.ttftMs.p50 = 10;
    b.ttftMs.p50 = 25;
    a.ttftMs.count = b.ttftMs.count = 4;
    a.ok = 4;
    b.ok = 4;
    model.setSummaries({a, b}, {QStringLiteral("A fast"), QStringLiteral("B regular")});
    EXPECT_EQ(model.columnCount(), 4); // metric, A, B, B/A
    const int row = model.rowOf(QStringLiteral("TTFT p50 (ms)"));
    ASSERT_GE(row, 0);
    EXPECT_EQ(model.data(model.index(row, 1)).toString(), QStringLiteral("10.0"));
    EXPECT_EQ(model.data(model.index(row, 3)).toString(), QStringLiteral("2.50"));
    EXPECT_DOUBLE_EQ(model.value(row, 2), 2.5);
    EXPECT_EQ(model.headerData(3, Qt::Horizontal).toString(), QStringLiteral("B/A"));
    model.setSummaries({a}, {QStringLiteral("A")});
    EXPECT_EQ(model.columnCount(), 2);
    model.setSummaries({}, {});
    EXPECT_EQ(model.columnCount(), 1);
}

// A candidate whose requests all failed has no latency samples: "-", not 0.0 (which reads
// as infinitely fast), and no B/A ratio.
TEST(SummaryTableModel, LatenciesWithoutSamplesShowADashAndNoRatio) {
    SummaryTableModel model;
    Tester tester(&model, Tester::FailureReportingMode::Fatal);
    lab::RunSummary a, b;
    a.ok = 4;
    a.ttftMs = {4, 12, 1, 10, 14, 12, 13, 14, 14, 14};
    a.e2eMs = a.queueMs = a.tpotMs = a.itlMs = a.ttftMs;
    b.errors = 4; // every request failed: all distributions empty (all zeros)
    model.setSummaries({a, b}, {QStringLiteral("A fast"), QStringLiteral("B remote")});
    for (const char* metric : {"TTFT p50 (ms)", "TTFT p90 (ms)", "TTFT p99 (ms)", "TPOT p50 (ms)", "ITL p99 (ms)",
                               "e2e p50 (ms)", "e2e p99 (ms)", "queue p50 (ms)"}) {
        const int row = model.rowOf(QString::fromLatin1(metric));
        ASSERT_GE(row, 0) << metric;
        EXPECT_NE(model.data(model.index(row, 1)).toString(), QStringLiteral("-")) << metric;
        EXPECT_EQ(model.data(model.index(row, 2)).toString(), QStringLiteral("-")) << metric;
        EXPECT_EQ(model.data(model.index(row, 3)).toString(), QStringLiteral("-")) << metric << " B/A";
        EXPECT_TRUE(std::isnan(model.value(row, 1))) << metric;
    }
    // Counts stay counts: 0 ok requests is a real 0.
    EXPECT_EQ(model.data(model.index(model.rowOf(QStringLiteral("requests ok")), 2)).toString(), QStringLiteral("0"));
}

TEST(SummaryTableModel, ShowsPrecisionRowsOnlyWhenAChecked) {
    SummaryTableModel model;
    Tester tester(&model, Tester::FailureReportingMode::Fatal);
    lab::RunSummary a, b;
    model.setSummaries({a, b}, {QStringLiteral("A"), QStringLiteral("B")});
    EXPECT_EQ(model.rowOf(QStringLiteral("agreement vs f32")), -1);
    lab::PrecisionCheck p;
    p.agreement = 0.5;
    p.meanKl = 0.25;
    b.precision = p;
    model.setSummaries({a, b}, {QStringLiteral("A"), QStringLiteral("B")});
    const int row = model.rowOf(QStringLiteral("agreement vs f32"));
    ASSERT_GE(row, 0);
    EXPECT_EQ(model.data(model.index(row, 1)).toString(), QStringLiteral("-")); // A was not checked
    EXPECT_EQ(model.data(model.index(row, 2)).toString(), QStringLiteral("0.5000"));
    EXPECT_EQ(model.data(model.index(row, 3)).toString(), QStringLiteral("-")); // no ratio against nothing
    EXPECT_EQ(model.data(model.index(model.rowOf(QStringLiteral("mean KL vs f32 (nats)")), 2)).toString(),
              QStringLiteral("0.250000"));
}

TEST(TensorTableModel, PassesModelTesterAndFormatsBytes) {
    TensorTableModel model;
    Tester tester(&model, Tester::FailureReportingMode::Fatal);
    ModelDescription d;
    d.tensors = {{QStringLiteral("token_embd.weight"), QStringLiteral("f16"), QStringLiteral("288x32000"), 18432000},
                 {QStringLiteral("output_norm.weight"), QStringLiteral("f32"), QStringLiteral("288"), 1152}};
    model.setModel(d);
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.data(model.index(0, TensorTableModel::Bytes)).toString(), QStringLiteral("17.6 MiB"));
    EXPECT_EQ(model.data(model.index(1, TensorTableModel::Bytes)).toString(), QStringLiteral("1.1 KiB"));
    EXPECT_EQ(formatBytes(512), QStringLiteral("512 B"));
    model.setModel({});
    EXPECT_EQ(model.rowCount(), 0);
}

} // namespace
} // namespace mb::gui
