#include "ui/style/cached_size_delegate.h"

#include <QFont>

namespace kcx::ui {

QSize CachedSizeDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    // What the size depends on: the text, the column (its alignment and decoration), a font
    // of the cell's own, whether there is a decoration, and the view's font and style
    // options (a change of those empties the cache). Building this key must stay far
    // cheaper than shaping the text: no QFont::key() and no QString::arg() per cell.
    if (option.font != font_ || option.decorationSize != decorationSize_ || option.features != features_) {
        sizes_.clear();
        font_ = option.font;
        decorationSize_ = option.decorationSize;
        features_ = option.features;
    }
    const QVariant font = index.data(Qt::FontRole);
    QString key = index.data(Qt::DisplayRole).toString();
    key += QChar(0x1f);
    key += QChar(ushort(index.column()));
    key += index.data(Qt::DecorationRole).isValid() ? QLatin1Char('d') : QLatin1Char('-');
    key += index.data(Qt::CheckStateRole).isValid() ? QLatin1Char('c') : QLatin1Char('-');
    if (font.isValid())
        key += qvariant_cast<QFont>(font).key();
    if (const auto it = sizes_.constFind(key); it != sizes_.constEnd())
        return *it;
    if (sizes_.size() > 8192)   // a bound, not a policy: the window shows far fewer texts
        sizes_.clear();
    const QSize s = QStyledItemDelegate::sizeHint(option, index);
    sizes_.insert(key, s);
    return s;
}

}  // namespace kcx::ui
