// GUI tests against a real store file: runs written through the sink, a StoreClient opened on it.
#pragma once

#include "db/db_test_util.h"
#include "db/run_store.h"
#include "gui/store_client.h"
#include "lab/selection.h"

#include <QSignalSpy>

#include <gtest/gtest.h>

namespace mb::test {

// A selection citing `runIds` (the first is its run), with placeholder documents.
inline db::StoredSelection selectionOf(std::vector<int64_t> runIds) {
    db::StoredSelection s;
    s.runIds = std::move(runIds);
    s.requirementsJson = R"({"slo":{"ttft_ms":{"p95":3000}}})";
    s.resultJson = R"({"recommendation":"fast"})";
    return s;
}

// A selection result that recommends fast mode, so a migration walks past node B.
inline lab::SelectionResult fastRecommendation() {
    lab::SelectionResult r;
    r.recommendation = lab::Mode::Fast;
    r.headline = "fast mode";
    return r;
}

// Opens `path` on the store thread and waits for it; false when it did not open.
inline bool openStore(gui::StoreClient& store, const std::string& path) {
    QSignalSpy opened(&store, &gui::StoreClient::opened);
    store.open(QString::fromStdString(path));
    return opened.wait(10000);
}

} // namespace mb::test
