// An item delegate that remembers the size of each text it has measured. A view whose
// header sizes columns to their contents asks for the size hint of every cell of a column
// whenever one cell changes; each answer lays the text out again (HarfBuzz shaping). The
// results tree did that for all its rows on every threshold edit: 17–21 % of the GUI
// thread's time while editing (issue 17). With this delegate only new texts are shaped.
#pragma once

#include <QFont>
#include <QHash>
#include <QStyledItemDelegate>

namespace kcx::ui {

class CachedSizeDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
    mutable QHash<QString, QSize> sizes_;
    mutable QFont font_;
    mutable QSize decorationSize_;
    mutable QStyleOptionViewItem::ViewItemFeatures features_;
};

}  // namespace kcx::ui
