// describeModel: a GGUF header read into what the Models page shows.
#include "gui/model_description.h"

#include "engine/gguf.h"
#include "engine/model_config.h"
#include "kernels/tensor_type.h"

#include <map>

namespace mb::gui {

ModelDescription describeModel(const QString& path) {
    const engine::GgufFile f = engine::GgufFile::open(path.toStdString());
    ModelDescription d;
    d.path = path;
    d.fileBytes = static_cast<qint64>(f.fileSize());
    auto text = [&](const char* key) {
        const engine::GgufValue* v = f.find(key);
        return v && v->type == engine::GgufValueType::String ? QString::fromStdString(v->asString()) : QString();
    };
    d.architecture = text("general.architecture");
    d.name = text("general.name");
    try {
        const auto c = engine::ModelConfig::fromGguf(f);
        d.shape = QStringLiteral("dim %1, layers %2, heads %3/%4, ffn %5, vocab %6, context %7")
                      .arg(c.dim).arg(c.layers).arg(c.heads).arg(c.kvHeads).arg(c.ffnDim).arg(c.vocabSize)
                      .arg(c.contextLength);
        for (const auto& [label, text] : engine::describeArchitecture(c))
            if (label != "architecture") d.features.emplace_back(QString::fromStdString(label), QString::fromStdString(text));
    } catch (const std::exception& e) {
        d.shape = QStringLiteral("not a model this engine runs: %1").arg(QString::fromUtf8(e.what()));
    }
    std::map<std::string, qint64> byType;
    for (const auto& t : f.tensors()) {
        d.parameters += static_cast<qint64>(t.elements());
        QStringList dims;
        for (uint64_t n : t.shape) dims << QString::number(n);
        const std::string type(kernels::tensorTypeName(t.type));
        d.tensors.push_back({QString::fromStdString(t.name), QString::fromStdString(type), dims.join(QLatin1Char('x')),
                             static_cast<qint64>(t.bytes)});
        byType[type] += static_cast<qint64>(t.bytes);
    }
    for (const auto& [type, bytes] : byType) d.bytesByType.emplace_back(QString::fromStdString(type), bytes);
    return d;
}

} // namespace mb::gui
