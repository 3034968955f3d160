// The "Compare" tab (issue 20, docs/steps.md): is a second run's kernel pair worse than the
// open one's? File ▸ Compare with… reads run B (or a summary) in the background and shows,
// for the selected clause's metric (abs_log_ratio without one), the difference B − A per
// value of the clause's per_slice key (or of the run's first label) and per position bucket,
// each with its 95 % interval over sequences, q-value and verdict (worse / better / same,
// the false discovery rate held at 0.05 over both tables), as `kcx compare` computes them.
#pragma once

#include <QString>
#include <QWidget>

#include <memory>
#include <optional>
#include <string>

class QLabel;
class QTableWidget;

namespace kcx {
struct Comparison;
}

namespace kcx::ui {

class Session;

class ComparePanel : public QWidget {
    Q_OBJECT
public:
    explicit ComparePanel(Session* session, QWidget* parent = nullptr);
    ~ComparePanel() override;
    // Compares the open run (A) with the run or summary at `path` (B).
    void compareWith(const QString& path);
    // The metric and slice key the next comparison uses (the selected clause's).
    void setClause(const QString& clause);
    bool isBusy() const { return busy_; }
    std::shared_ptr<const Comparison> comparison() const { return comparison_; }
    QTableWidget* table() const { return table_; }
    QTableWidget* grid() const { return grid_; }
    QString pathB() const { return pathB_; }

signals:
    void compared();
    void failed(const QString& message);

private:
    void show(std::shared_ptr<const Comparison> c, const QString& error);
    void fillGrid();
    Session* session_;
    QLabel* caption_;
    QTableWidget* table_;
    QTableWidget* grid_;
    QString clause_, pathB_;
    std::shared_ptr<const Comparison> comparison_;
    quint64 generation_ = 0;
    bool busy_ = false;
};

}  // namespace kcx::ui
