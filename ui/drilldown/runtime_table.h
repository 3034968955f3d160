// A sequence's runtime record (SPEC 1.1 `runtime`: batch size, latency, kernel version, …)
// as a two-column key/value table. Nested objects are flattened with dotted keys
// ("sched.queue_ms"), array elements get [i]; numbers are formatted for reading (no
// float noise such as 0.30000000000000004). Every text is shown as plain text.
#pragma once

#include <QString>
#include <QTableWidget>

#include <vector>

#include <nlohmann/json.hpp>

namespace kcx::ui {

struct RuntimeField {
    QString key, value;
    bool number = false;   // right-aligned
};

// The rows of a record (at most `limit`; a last row says how many were left out). A record
// that is not an object is one row with the key "value".
std::vector<RuntimeField> flattenRuntime(const nlohmann::json& record, size_t limit = 500);
// A number as the table shows it: integers whole, others with up to 6 decimals (trailing
// zeros dropped) or in exponent form when very large or small.
QString formatRuntimeNumber(const nlohmann::json& number);

class RuntimeTable : public QTableWidget {
    Q_OBJECT
public:
    explicit RuntimeTable(QWidget* parent = nullptr);
    // null: the run has no runtime record for this sequence.
    void setRecord(const nlohmann::json* record);
    QSize sizeHint() const override;
};

}  // namespace kcx::ui
