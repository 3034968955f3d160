#include "ui/drilldown/runtime_table.h"

#include <QHeaderView>
#include <QScrollBar>

#include <algorithm>
#include <cmath>

#include "ui/style/plain_text.h"

namespace kcx::ui {

namespace {

constexpr int kRuntimeInlineArray = 8;   // arrays of up to this many scalars stay on one row

bool runtimeIsScalar(const nlohmann::json& j) { return !j.is_object() && !j.is_array(); }

QString runtimeScalarText(const nlohmann::json& j) {
    if (j.is_string())
        return QString::fromStdString(j.get<std::string>());
    if (j.is_number())
        return formatRuntimeNumber(j);
    if (j.is_boolean())
        return j.get<bool>() ? QStringLiteral("true") : QStringLiteral("false");
    if (j.is_null())
        return QStringLiteral("null");
    return QString::fromStdString(j.dump());
}

struct RuntimeFlattener {
    std::vector<RuntimeField>& out;
    size_t limit;
    size_t skipped = 0;

    void add(const QString& key, const nlohmann::json& j) {
        if (out.size() >= limit) {
            ++skipped;
            return;
        }
        if (j.is_object() && !j.empty()) {
            for (auto it = j.begin(); it != j.end(); ++it)
                add(key.isEmpty() ? QString::fromStdString(it.key()) : key + QLatin1Char('.') + QString::fromStdString(it.key()), *it);
            return;
        }
        if (j.is_array() && !j.empty()) {
            const bool scalars = std::all_of(j.begin(), j.end(), runtimeIsScalar);
            if (scalars && j.size() <= size_t(kRuntimeInlineArray)) {
                QStringList parts;
                for (const auto& e : j)
                    parts << runtimeScalarText(e);
                out.push_back({key, parts.join(QLatin1String(", ")), false});
                return;
            }
            for (size_t i = 0; i < j.size(); ++i)
                add(key + QStringLiteral("[%1]").arg(i), j[i]);
            return;
        }
        if (j.is_object() || j.is_array()) {
            out.push_back({key, j.is_object() ? QStringLiteral("{}") : QStringLiteral("[]"), false});
            return;
        }
        out.push_back({key, runtimeScalarText(j), j.is_number()});
    }
};

}  // namespace

QString formatRuntimeNumber(const nlohmann::json& number) {
    if (number.is_number_integer())
        return number.is_number_unsigned() ? QString::number(number.get<uint64_t>()) : QString::number(number.get<int64_t>());
    const double v = number.get<double>();
    const double a = std::fabs(v);
    if (!std::isfinite(v) || (a != 0 && (a < 1e-4 || a >= 1e12)))
        return QString::number(v, 'g', 6);
    QString s = QString::number(v, 'f', 6);
    while (s.endsWith(QLatin1Char('0')))
        s.chop(1);
    if (s.endsWith(QLatin1Char('.')))
        s.chop(1);
    return s == QLatin1String("-0") ? QStringLiteral("0") : s;
}

std::vector<RuntimeField> flattenRuntime(const nlohmann::json& record, size_t limit) {
    std::vector<RuntimeField> out;
    RuntimeFlattener f{out, limit};
    if (record.is_object() && !record.empty())
        f.add(QString(), record);
    else if (!record.is_null())
        f.add(QStringLiteral("value"), record);
    if (f.skipped > 0)
        out.push_back({QStringLiteral("\u2026"), QObject::tr("%n more field(s) not shown", nullptr, int(f.skipped)), false});
    return out;
}

RuntimeTable::RuntimeTable(QWidget* parent) : QTableWidget(0, 2, parent) {
    setHorizontalHeaderLabels({tr("runtime"), tr("value")});
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setAlternatingRowColors(true);
    setWordWrap(false);
    verticalHeader()->hide();
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    horizontalHeader()->setStretchLastSection(true);
    horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    setRecord(nullptr);
}

void RuntimeTable::setRecord(const nlohmann::json* record) {
    const std::vector<RuntimeField> rows =
        record && !record->is_null() ? flattenRuntime(*record) : std::vector<RuntimeField>{};
    setRowCount(0);
    if (rows.empty()) {
        setRowCount(1);
        auto* none = new QTableWidgetItem(record ? tr("(empty record)") : tr("(no runtime record)"));
        none->setForeground(palette().color(QPalette::PlaceholderText));
        setItem(0, 0, none);
        setItem(0, 1, new QTableWidgetItem);
        setToolTip(QString());
        return;
    }
    setRowCount(int(rows.size()));
    for (size_t r = 0; r < rows.size(); ++r) {
        auto* key = new QTableWidgetItem(rows[r].key);
        auto* value = new QTableWidgetItem(rows[r].value);
        key->setToolTip(plainToolTip(rows[r].key));
        value->setToolTip(plainToolTip(rows[r].value));
        if (rows[r].number)
            value->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        setItem(int(r), 0, key);
        setItem(int(r), 1, value);
    }
    setToolTip(tr("The sequence's runtime record, as logged"));
    resizeColumnToContents(0);
    updateGeometry();
}

QSize RuntimeTable::sizeHint() const {
    // Both columns' contents (within limits) and up to five rows; more scroll.
    const int rows = std::min(rowCount(), 5);
    const int values = std::max(sizeHintForColumn(1), horizontalHeader()->sectionSizeHint(1));
    const int scroll = rowCount() > rows ? verticalScrollBar()->sizeHint().width() : 0;
    const int width = std::clamp(columnWidth(0) + values + 2 * frameWidth() + scroll, 160, 440);
    return {width, horizontalHeader()->sizeHint().height() + rows * verticalHeader()->defaultSectionSize() +
                       2 * frameWidth()};
}

}  // namespace kcx::ui
