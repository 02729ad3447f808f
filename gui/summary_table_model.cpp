// SummaryTableModel: RunSummary fields as rows.
#include "gui/summary_table_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mb::gui {

namespace {
// A latency of a distribution without samples (every request failed) is unknown, not 0:
// NaN, which the table shows as "-", with no B/A ratio.
double orNan(const lab::Distribution& d, double value) {
    return d.count > 0 ? value : std::numeric_limits<double>::quiet_NaN();
}
} // namespace

void SummaryTableModel::setSummaries(const std::vector<lab::RunSummary>& summaries, const QStringList& names) {
    beginResetModel();
    m_names = names;
    m_rows.clear();
    struct Metric {
        const char* name;
        int precision;
        double (*get)(const lab::RunSummary&);
    };
    static const Metric metrics[] = {
        {"requests ok", 0, [](const lab::RunSummary& s) { return double(s.ok); }},
        {"errors + rejected", 0, [](const lab::RunSummary& s) { return double(s.errors + s.rejected); }},
        {"truncated requests", 0, [](const lab::RunSummary& s) { return double(s.truncated); }},
        {"TTFT p50 (ms)", 1, [](const lab::RunSummary& s) { return orNan(s.ttftMs, s.ttftMs.p50); }},
        {"TTFT p90 (ms)", 1, [](const lab::RunSummary& s) { return orNan(s.ttftMs, s.ttftMs.p90); }},
        {"TTFT p99 (ms)", 1, [](const lab::RunSummary& s) { return orNan(s.ttftMs, s.ttftMs.p99); }},
        {"TPOT p50 (ms)", 2, [](const lab::RunSummary& s) { return orNan(s.tpotMs, s.tpotMs.p50); }},
        {"ITL p99 (ms)", 2, [](const lab::RunSummary& s) { return orNan(s.itlMs, s.itlMs.p99); }},
        {"e2e p50 (ms)", 1, [](const lab::RunSummary& s) { return orNan(s.e2eMs, s.e2eMs.p50); }},
        {"e2e p99 (ms)", 1, [](const lab::RunSummary& s) { return orNan(s.e2eMs, s.e2eMs.p99); }},
        {"queue p50 (ms)", 1, [](const lab::RunSummary& s) { return orNan(s.queueMs, s.queueMs.p50); }},
        {"output tokens/s", 1, [](const lab::RunSummary& s) { return s.outputTokensPerS; }},
        {"requests/s", 2, [](const lab::RunSummary& s) { return s.requestsPerS; }},
        {"prefix hit rate", 3, [](const lab::RunSummary& s) { return s.hitRate; }},
        {"KV peak (MiB)", 1, [](const lab::RunSummary& s) { return double(s.kvBytesPeak) / 1048576.0; }},
        {"SLO attainment", 3, [](const lab::RunSummary& s) { return s.sloAttainment; }},
        {"duration (s)", 2, [](const lab::RunSummary& s) { return s.durationS; }},
    };
    for (const Metric& m : metrics) {
        Row row{QString::fromLatin1(m.name), m.precision, {}};
        for (const auto& s : summaries) row.values.push_back(m.get(s));
        m_rows.push_back(std::move(row));
    }
    // Precision A/B rows when any candidate was checked; NaN (shown "-") for one that was not.
    if (std::any_of(summaries.begin(), summaries.end(), [](const lab::RunSummary& s) { return s.precision.has_value(); })) {
        struct PrecisionMetric {
            const char* name;
            int precision;
            double lab::PrecisionCheck::*field;
        };
        static const PrecisionMetric checks[] = {
            {"agreement vs f32", 4, &lab::PrecisionCheck::agreement},
            {"mean KL vs f32 (nats)", 6, &lab::PrecisionCheck::meanKl},
            {"perplexity", 3, &lab::PrecisionCheck::candidatePerplexity},
            {"f32 perplexity", 3, &lab::PrecisionCheck::referencePerplexity},
        };
        for (const PrecisionMetric& m : checks) {
            Row row{QString::fromLatin1(m.name), m.precision, {}};
            for (const auto& s : summaries)
                row.values.push_back(s.precision ? (*s.precision).*m.field : std::numeric_limits<double>::quiet_NaN());
            m_rows.push_back(std::move(row));
        }
    }
    addPostprocessRows(summaries);
    addImageRows(summaries);
    endResetModel();
}

// The plugin chain's rows when any candidate ran one (as `compare`'s table); NaN (shown
// "-") for a candidate without a chain or a figure without samples.
void SummaryTableModel::addPostprocessRows(const std::vector<lab::RunSummary>& summaries) {
    if (std::none_of(summaries.begin(), summaries.end(), [](const lab::RunSummary& s) { return s.postprocess.has_value(); }))
        return;
    using P = lab::PostprocessSummary;
    constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
    struct PostMetric {
        const char* name;
        int precision;
        lab::Distribution P::*field;
    };
    static const PostMetric post[] = {
        {"plugins ms p50", 3, &P::ms},
        {"plugins ms/call p50", 4, &P::callMs},
        {"plugin +TTFT p50 (ms)", 2, &P::extraTtftMs},
        {"shown ITL p50 (ms)", 2, &P::outputItlMs},
    };
    for (const PostMetric& m : post) {
        Row row{QString::fromLatin1(m.name), m.precision, {}};
        for (const auto& s : summaries)
            row.values.push_back(s.postprocess ? orNan((*s.postprocess).*m.field, ((*s.postprocess).*m.field).p50) : kNan);
        m_rows.push_back(std::move(row));
    }
    Row ended{QStringLiteral("plugin ended/failed"), 0, {}};
    for (const auto& s : summaries)
        ended.values.push_back(s.postprocess ? double(s.postprocess->ended + s.postprocess->failed) : kNan);
    m_rows.push_back(std::move(ended));
}

// The images' rows when any candidate's requests carried images (as `compare`'s table); NaN
// (shown "-") for a candidate without images or a figure without samples.
void SummaryTableModel::addImageRows(const std::vector<lab::RunSummary>& summaries) {
    if (std::none_of(summaries.begin(), summaries.end(), [](const lab::RunSummary& s) { return s.images.has_value(); }))
        return;
    using I = lab::ImageSummary;
    constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
    struct ImageMetric {
        const char* name;
        int precision;
        lab::Distribution I::*field;
        double lab::Distribution::*percentile;
    };
    static const ImageMetric metrics[] = {
        {"image tokens p50", 0, &I::imageTokens, &lab::Distribution::p50},
        {"encode p50 (ms)", 2, &I::encodeMs, &lab::Distribution::p50},
        {"encode p95 (ms)", 2, &I::encodeMs, &lab::Distribution::p95},
        {"encode share of TTFT p50", 3, &I::encodeShare, &lab::Distribution::p50},
        {"image requests' TTFT p50 (ms)", 1, &I::ttftMs, &lab::Distribution::p50},
        {"cached tokens p50 (image requests)", 0, &I::cachedTokens, &lab::Distribution::p50},
    };
    for (const ImageMetric& m : metrics) {
        Row row{QString::fromLatin1(m.name), m.precision, {}};
        for (const auto& s : summaries) {
            if (!s.images) {
                row.values.push_back(kNan);
                continue;
            }
            const lab::Distribution& d = (*s.images).*m.field;
            row.values.push_back(orNan(d, d.*m.percentile));
        }
        m_rows.push_back(std::move(row));
    }
    Row images{QStringLiteral("images"), 0, {}};
    Row dropped{QStringLiteral("images dropped"), 0, {}};
    for (const auto& s : summaries) {
        images.values.push_back(s.images ? double(s.images->images) : kNan);
        dropped.values.push_back(s.images ? double(s.images->dropped) : kNan);
    }
    m_rows.push_back(std::move(images));
    m_rows.push_back(std::move(dropped));
}

double SummaryTableModel::value(int row, int column) const {
    if (row < 0 || row >= static_cast<int>(m_rows.size())) return 0;
    const auto& v = m_rows[static_cast<size_t>(row)].values;
    if (column >= 0 && column < static_cast<int>(v.size())) return v[static_cast<size_t>(column)];
    if (column == static_cast<int>(v.size()) && v.size() == 2 && v[0] != 0) return v[1] / v[0];
    return 0;
}

int SummaryTableModel::rowOf(const QString& metric) const {
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].metric == metric) return static_cast<int>(i);
    return -1;
}

int SummaryTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SummaryTableModel::columnCount(const QModelIndex& parent) const {
    if (parent.isValid()) return 0;
    const int n = static_cast<int>(m_names.size());
    return 1 + n + (n == 2 ? 1 : 0);
}

QVariant SummaryTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& row = m_rows[static_cast<size_t>(index.row())];
    if (role == Qt::TextAlignmentRole)
        return index.column() == 0 ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    if (index.column() == 0) return row.metric;
    const int c = index.column() - 1;
    if (c < static_cast<int>(row.values.size())) {
        const double v = row.values[static_cast<size_t>(c)];
        return std::isnan(v) ? QStringLiteral("-") : QString::number(v, 'f', row.precision);
    }
    if (row.values.size() == 2 && row.values[0] != 0 && std::isfinite(row.values[0] + row.values[1]))
        return QString::number(row.values[1] / row.values[0], 'f', 2);
    return QStringLiteral("-");
}

QVariant SummaryTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == 0) return tr("metric");
    if (section - 1 < m_names.size()) return m_names[section - 1];
    return tr("B/A");
}

} // namespace mb::gui
