// "Where is it hiding?": slice discovery (core/discover/discover.h) in the window, and "Suggest
// thresholds" (core/discover/calibrate.h) for the contract panel.
//
// Wiring (main window): create `new DiscoverPanel(panelParent)`, call setRun(engine) when a
// run is loaded (Session::engine()), and connect
//   findingActivated(conditions)  -> show the finding as a heatmap row against the rest of
//                                    the run (HeatmapPanel::showFinding), zoomed to
//                                    positionRange(conditions) when it has one;
//   clauseRequested(yaml)         -> append the clause under `numerical:` of the contract
//                                    text (Session::setContractText).
// For "Suggest thresholds": showCalibrationDialog(parent, run, apply) runs the calibration
// on the current run in the background and, on "Use", calls apply(yaml).
#pragma once

#include <QWidget>

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/discover/discover.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace kcx::ui {

class DiscoverPanel : public QWidget {
    Q_OBJECT
public:
    explicit DiscoverPanel(QWidget* parent = nullptr);

    // The run to search (its metric engine, shared with the session). Clears old findings.
    void setRun(std::shared_ptr<MetricEngine> engine);
    // Starts a search in the background with the panel's metric and depth.
    void search();
    bool busy() const { return busy_; }
    const Discovery& discovery() const { return discovery_; }

    // [from, to) of a derived.pos_bucket condition, if the finding has one.
    static std::optional<std::pair<size_t, size_t>> positionRange(const std::vector<SliceCondition>& conditions);

signals:
    void findingActivated(const std::vector<kcx::SliceCondition>& conditions);
    void clauseRequested(const QString& yaml);
    void searched();   // a search finished (or failed: see the summary label)

private:
    void show(const Discovery& d);

    std::shared_ptr<MetricEngine> engine_;
    Discovery discovery_;
    QComboBox* metric_;
    QSpinBox* depth_;
    QPushButton* run_;
    QPushButton* clause_;
    QLabel* summary_;
    QTableWidget* table_;
    bool busy_ = false;
    int generation_ = 0;
};

// Runs kcx::calibrate on `good` (no bad runs) and shows the proposed contract; "Use" calls
// apply(yaml). Non-modal; deletes itself when closed.
void showCalibrationDialog(QWidget* parent, std::shared_ptr<const Run> good,
                           std::function<void(const std::string&)> apply);

}  // namespace kcx::ui
