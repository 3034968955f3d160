// The "Corrections" tab (issue 21, docs/corrections.md): what each off-policy correction
// (tis, token_mask, geo_mask, seq_reject) would do to the open run — tokens and sequences
// affected, the effective sample size left, ρ and the policy-gradient bias bound of SPEC 5
// step 4 over what it keeps, the share of affected sequences with a positive reward — over the
// run and per step or slice. The bounds are edited in the table or dragged on the histogram of
// log-weights, re-evaluated in the background as they move; each drag or edit is one undo
// step. Above it, the diagnosis of systematic causes (kcx diagnose), computed once per run;
// diagnosed() tells the verdict banner when something is found.
#pragma once

#include <QString>
#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

#include "core/corrections/corrections.h"
#include "core/corrections/diagnose.h"

class QComboBox;
class QLabel;
class QTableWidget;
class QTimer;
class QUndoStack;

namespace kcx::ui {

class Session;
class WeightHistogram;

class CorrectionsPanel : public QWidget {
    Q_OBJECT
public:
    CorrectionsPanel(Session* session, QUndoStack* undo, QWidget* parent = nullptr);
    ~CorrectionsPanel() override;

    bool isBusy() const { return busy_ || diagnosing_; }
    std::shared_ptr<const CorrectionsReport> report() const { return report_; }
    std::shared_ptr<const Diagnosis> diagnosis() const { return diagnosis_; }
    const std::vector<CorrectionMethod>& methods() const { return methods_; }
    // Sets bound `which` of method `method` and re-evaluates; calls with the same gesture
    // (ThresholdCommand::newGesture()) are one undo step. Out-of-order bounds are refused.
    bool setBound(size_t method, size_t which, double value, quint64 gesture);
    void selectMethod(int method);
    int selectedMethod() const { return selected_; }
    void setPerSlice(const QString& key);   // "" = over the run only
    // A framework's preset ("verl", …; "" = KCX's defaults), as one undo step.
    bool setPreset(const QString& framework);
    // Replaces the methods without an undo step (the undo command itself).
    void applyMethods(const std::vector<CorrectionMethod>& methods, const QString& preset);
    QString preset() const { return preset_; }
    QTableWidget* table() const { return table_; }
    QTableWidget* sliceTable() const { return sliceTable_; }
    WeightHistogram* histogram() const { return histogram_; }
    QLabel* diagnosisLabel() const { return diagnosisLabel_; }
    // The banner's one line: the leading finding, or "" when nothing was found.
    QString diagnosisSummary() const;

    // Applies bounds without an undo step (the undo command itself).
    void applyBound(size_t method, size_t which, double value);

    // While held() is true, the diagnosis and the corrections wait (the panel stays busy);
    // release() starts what waits once it is false. The window holds them back until its
    // verdicts and heatmap are drawn: computed beside the first evaluation, they read the
    // whole run and delayed the verdicts of a 10M-token run from 0.5 to 2.0 s (issue 17).
    void setHoldBack(std::function<bool()> held);
    void release();

signals:
    void diagnosed(const QString& summary);
    void evaluated();

private:
    void runChanged();
    void recompute();
    void launch(std::function<void()>& pending, std::function<void()> start);
    void showReport();
    void showSlices();
    void showDiagnosis();
    void updateHistogram();

    Session* session_;
    QUndoStack* undo_;
    QLabel* diagnosisLabel_;
    QLabel* caption_;
    WeightHistogram* histogram_;
    QTableWidget* table_;
    QComboBox* perSlice_;
    QTableWidget* sliceTable_;
    QComboBox* presetBox_;
    QString preset_;
    std::vector<CorrectionMethod> methods_;
    int selected_ = 0;
    std::shared_ptr<const CorrectionsReport> report_;
    std::shared_ptr<const Diagnosis> diagnosis_;
    std::vector<double> tokenCounts_, sequenceCounts_;
    double range_ = 1;
    quint64 generation_ = 0, runGeneration_ = 0;
    std::function<bool()> holdBack_;
    std::function<void()> pendingDiagnosis_, pendingCorrections_;
    QTimer* holdTimer_ = nullptr;
    bool busy_ = false, diagnosing_ = false, filling_ = false;
    quint64 gesture_ = 0;
};

}  // namespace kcx::ui
