#include "ui/style/cached_size_delegate.h"

#include <QFont>
#include <QIcon>

namespace kcx::ui {

QSize CachedSizeDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    // What the size depends on: the text, the font, whether there is a decoration (and the
    // size it is drawn at), a check box, and the style's own settings of the view (the option's
    // features, decoration size and text alignment; its font covers a changed application font).
    const QVariant font = index.data(Qt::FontRole), decoration = index.data(Qt::DecorationRole),
                   check = index.data(Qt::CheckStateRole);
    QString key = index.data(Qt::DisplayRole).toString();
    key += QChar(0x1f);
    key += font.isValid() ? qvariant_cast<QFont>(font).key() : option.font.key();
    key += QStringLiteral("\x1f%1 %2 %3x%4 %5 %6")
               .arg(decoration.isValid() ? decoration.typeId() : -1)
               .arg(check.isValid() ? 1 : 0)
               .arg(option.decorationSize.width())
               .arg(option.decorationSize.height())
               .arg(int(option.features))
               .arg(int(option.displayAlignment));
    if (decoration.isValid() && decoration.canConvert<QIcon>()) {   // an icon's own sizes
        const QIcon icon = qvariant_cast<QIcon>(decoration);
        for (const QSize& s : icon.availableSizes())
            key += QStringLiteral(" %1x%2").arg(s.width()).arg(s.height());
    }
    if (const auto it = sizes_.constFind(key); it != sizes_.constEnd())
        return *it;
    if (sizes_.size() > 8192)   // a bound, not a policy: the window shows far fewer texts
        sizes_.clear();
    const QSize s = QStyledItemDelegate::sizeHint(option, index);
    sizes_.insert(key, s);
    return s;
}

}  // namespace kcx::ui
