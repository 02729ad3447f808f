// ImageStrip: QImageReader validation and scaled thumbnails, rebuilt whenever the list changes.
#include "gui/image_strip.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QImageReader>
#include <QLabel>
#include <QPixmap>
#include <QToolButton>
#include <QVBoxLayout>

namespace mb::gui {

ImageStrip::ImageStrip(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("playground.images"));
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* add = new QToolButton;
    add->setObjectName(QStringLiteral("playground.images.add"));
    add->setText(tr("Add image…"));
    add->setToolTip(tr("Attach PNG or JPEG images to the prompt (or drop them on the page); each candidate "
                       "encodes them with its vision encoder (mmproj)"));
    connect(add, &QToolButton::clicked, this, [this] {
        const QStringList files =
            QFileDialog::getOpenFileNames(this, tr("Add image"), QString(), tr("Images (*.png *.jpg *.jpeg)"));
        if (const QStringList refused = addImages(files); !refused.isEmpty()) emit imagesRefused(refused);
    });
    outer->addWidget(add);
    m_row = new QHBoxLayout;
    m_row->setSpacing(6);
    outer->addLayout(m_row);
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("playground.images.summary"));
    outer->addWidget(m_summary);
    outer->addStretch(1);
    rebuild();
}

QPixmap ImageStrip::thumbnail(const QString& path, QString& error) {
    QImageReader reader(path);
    const QByteArray format = reader.format(); // from the content, not the name
    const QString name = QFileInfo(path).fileName();
    if (format != "png" && format != "jpeg") {
        error = tr("%1 is not a PNG or JPEG image%2")
                    .arg(name, reader.canRead() ? tr(" (it is %1)").arg(QString::fromLatin1(format))
                                                : QStringLiteral(": ") + reader.errorString());
        return {};
    }
    const QSize size = reader.size();
    if (size.isValid() && (size.width() > kThumbPx || size.height() > kThumbPx))
        reader.setScaledSize(size.scaled(kThumbPx, kThumbPx, Qt::KeepAspectRatio));
    const QImage image = reader.read();
    if (image.isNull()) {
        error = tr("%1 is not a readable image: %2").arg(name, reader.errorString());
        return {};
    }
    return QPixmap::fromImage(image);
}

QStringList ImageStrip::addImages(const QStringList& paths) {
    QStringList refused;
    bool added = false;
    for (const QString& path : paths) {
        const QString file = QFileInfo(path).absoluteFilePath();
        if (m_paths.contains(file)) continue;
        QString error;
        QPixmap thumb = thumbnail(file, error);
        if (thumb.isNull()) {
            refused << error;
            continue;
        }
        m_paths << file;
        m_thumbs.push_back(std::move(thumb));
        added = true;
    }
    if (added) {
        rebuild();
        emit imagesChanged();
    }
    return refused;
}

void ImageStrip::removeImage(int index) {
    if (index < 0 || index >= m_paths.size()) return;
    m_paths.removeAt(index);
    m_thumbs.erase(m_thumbs.begin() + index);
    rebuild();
    emit imagesChanged();
}

void ImageStrip::clear() {
    if (m_paths.isEmpty()) return;
    m_paths.clear();
    m_thumbs.clear();
    rebuild();
    emit imagesChanged();
}

// A handful of images at most: rebuilding the row is simpler than patching it.
void ImageStrip::rebuild() {
    while (QLayoutItem* item = m_row->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    for (int i = 0; i < m_paths.size(); ++i) {
        auto* cell = new QWidget;
        auto* v = new QVBoxLayout(cell);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(1);
        auto* thumb = new QLabel;
        thumb->setObjectName(QStringLiteral("playground.images.thumb.%1").arg(i));
        thumb->setPixmap(m_thumbs[static_cast<size_t>(i)]);
        thumb->setFixedSize(kThumbPx, kThumbPx);
        thumb->setAlignment(Qt::AlignCenter);
        thumb->setFrameShape(QFrame::StyledPanel);
        thumb->setToolTip(m_paths[i]);
        auto* remove = new QToolButton;
        remove->setObjectName(QStringLiteral("playground.images.remove.%1").arg(i));
        remove->setText(tr("Remove"));
        remove->setToolTip(tr("Remove %1").arg(QFileInfo(m_paths[i]).fileName()));
        remove->setAutoRaise(true);
        connect(remove, &QToolButton::clicked, this, [this, i] { removeImage(i); });
        v->addWidget(thumb, 0, Qt::AlignHCenter);
        v->addWidget(remove, 0, Qt::AlignHCenter);
        m_row->addWidget(cell);
    }
    const auto n = m_paths.size();
    m_summary->setText(n == 0 ? tr("no images (drop PNG or JPEG files on the page)")
                              : (n == 1 ? tr("1 image") : tr("%1 images").arg(n)) + tr(", after the prompt's first token"));
}

} // namespace mb::gui
