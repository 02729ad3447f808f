// The report's first and last sections: the executive summary and the appendix of score formulas.
#include "lab/report.h"
#include "lab/score_formulas.h"

namespace mb::lab {

ReportSection summarySection(const std::optional<ExecutiveSummary>& summary) {
    ReportSection s{"summary", "Executive summary", {}, {}, {}};
    if (!summary) {
        s.paragraphs.push_back(
            "No selection was made for these runs: nothing is recommended, and this report holds "
            "the measurements only.");
        return s;
    }
    s.paragraphs.push_back(summary->verdictLine);
    s.paragraphs.push_back(summary->confidenceLine);
    ReportTable numbers{"The numbers that decided", {"figure", "value", "against"}, {}};
    for (const auto& n : summary->numbers) numbers.rows.push_back({n.label, n.value, n.against});
    if (!numbers.rows.empty()) s.tables.push_back(std::move(numbers));
    ReportTable change{"What would change the decision", {"change"}, {}};
    for (const auto& c : summary->wouldChange) change.rows.push_back({c});
    if (!change.rows.empty()) s.tables.push_back(std::move(change));
    return s;
}

ReportSection appendixSection(const std::optional<ReportSelection>& selection) {
    ReportSection s{"appendix", "Appendix: score formulas", {}, {}, {}};
    if (!selection) {
        s.paragraphs.push_back(
            "No selection: no scores were computed (docs/SELECTION.md has the formulas).");
        return s;
    }
    s.paragraphs.push_back(
        "The formulas the selection applied, with its constants, and its own figures through "
        "them.");
    ReportTable t{"Score formulas", {"term", "formula", "in this selection"}, {}};
    for (const auto& f : scoreFormulas(selection->result))
        t.rows.push_back({f.term, f.formula, f.applied});
    s.tables.push_back(std::move(t));
    return s;
}

} // namespace mb::lab
