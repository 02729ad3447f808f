// The Playground's attached images: an "Add image…" button and a row of thumbnails with remove buttons.
#pragma once

#include <QStringList>
#include <QWidget>

class QHBoxLayout;
class QLabel;

namespace mb::gui {

// UI thread. Files are checked with Qt's image I/O (QImageReader) when added: only PNG and
// JPEG files that decode are kept (the engine's decoder reads those two), each shown as a
// 56 px thumbnail with its path as tooltip and a remove button. Thumbnails are decoded
// scaled down, on the UI thread: a photo takes milliseconds. Widgets are named
// "playground.images.add", "playground.images.thumb.N", "playground.images.remove.N"
// (N from 0, in order) and "playground.images.summary".
class ImageStrip : public QWidget {
    Q_OBJECT
public:
    explicit ImageStrip(QWidget* parent = nullptr);

    // Adds each file; returns one message per refused file ("notes.txt is not a PNG or JPEG
    // image: ..."), empty when all were kept. A file already attached is not added twice.
    QStringList addImages(const QStringList& paths);
    void removeImage(int index);
    void clear();
    const QStringList& paths() const { return m_paths; }

    static constexpr int kThumbPx = 56;

signals:
    void imagesChanged();
    // Files the "Add image…" dialog chose that were refused, for the page's status line.
    void imagesRefused(const QStringList& messages);

private:
    // The thumbnail of `path`, or an empty pixmap with `error` set.
    static QPixmap thumbnail(const QString& path, QString& error);
    void rebuild();

    QStringList m_paths;
    std::vector<QPixmap> m_thumbs;
    QHBoxLayout* m_row;
    QLabel* m_summary;
};

} // namespace mb::gui
