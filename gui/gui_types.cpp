// Metatype registration for the values of gui_types.h.
#include "gui/gui_types.h"

#include "gui/store_worker.h"

namespace mb::gui {

void registerGuiTypes() {
    qRegisterMetaType<PlaygroundJob>();
    qRegisterMetaType<BenchmarkJob>();
    qRegisterMetaType<WarmupJob>();
    qRegisterMetaType<RequestOutcome>();
    qRegisterMetaType<LiveBatch>();
    qRegisterMetaType<JobOutcome>();
    qRegisterMetaType<ModelDescription>();
    qRegisterMetaType<StreamedToken>();
    qRegisterMetaType<QVector<StreamedToken>>();
    qRegisterMetaType<RunListingList>();
    qRegisterMetaType<db::StoredRun>();
    qRegisterMetaType<db::RunDiff>();
    qRegisterMetaType<db::RunFilter>();
    qRegisterMetaType<SelectionList>();
    qRegisterMetaType<SummaryList>();
    qRegisterMetaType<SelectionRequest>();
    qRegisterMetaType<lab::SelectionResult>();
    qRegisterMetaType<lab::Report>();
    qRegisterMetaType<lab::WarmupResult>();
    qRegisterMetaType<lab::PrecisionCheck>();
    qRegisterMetaType<PrecisionJob>();
    qRegisterMetaType<std::vector<int64_t>>();
    qRegisterMetaType<PluginApprovalList>();
    qRegisterMetaType<db::PluginApproval>();
    qRegisterMetaType<plugins::AuditReport>();
}

} // namespace mb::gui
