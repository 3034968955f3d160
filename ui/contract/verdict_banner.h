// The verdict banner: a strip coloured by the verdict (pass green, fail red,
// inconclusive amber, grey before the first evaluation) with the verdict, the action at
// the current stage, the counts of results by status, and "evaluating…" while the
// session has an evaluation in flight. Before the first evaluation it says what is
// happening or missing: loading (with the share read), evaluating, no run, no contract,
// or why the run could not be loaded. Under it, when `kcx diagnose`'s tests found a
// systematic cause, a line naming it.
#pragma once

#include <QFrame>

#include <memory>

#include "core/evaluate/evaluator.h"

class QLabel;

namespace kcx::ui {

class Session;

class VerdictBanner : public QFrame {
    Q_OBJECT
public:
    explicit VerdictBanner(QWidget* parent = nullptr);

    // Follows the session: its evaluations, failures and Session::evaluating().
    void setSession(Session* session);
    void setEvaluation(std::shared_ptr<const Evaluation> evaluation);
    void setEvaluating(bool evaluating);
    void setError(const QString& message);   // an evaluation failed; cleared by the next result
    // Before an evaluation exists: what the window is doing or waiting for.
    void setLoading(bool loading, double fraction = 0, const QString& what = {});
    void setLoadFailed(const QString& message);
    // The diagnosis of systematic causes (issue 21): a second line when something was found;
    // "" hides it. A click on it emits diagnosisActivated (the window shows Corrections).
    void setDiagnosis(const QString& summary);
    QString diagnosisText() const;

    QString verdictText() const;
    QString actionText() const;
    QString countsText() const;
    bool evaluatingShown() const { return evaluating_; }
    QColor colour() const { return colour_; }

signals:
    void diagnosisActivated();

private:
    void refresh();

    std::shared_ptr<const Evaluation> evaluation_;
    Session* session_ = nullptr;
    bool evaluating_ = false;
    bool loading_ = false;
    double loadFraction_ = 0;
    QString loadWhat_, loadError_;
    QString error_;
    QColor colour_;
    QLabel* verdict_;
    QLabel* action_;
    QLabel* counts_;
    QLabel* busy_;
    QLabel* diagnosis_;
};

}  // namespace kcx::ui
