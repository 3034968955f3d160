// The verdict banner: a strip coloured by the verdict (pass green, fail red,
// inconclusive amber, grey before the first evaluation) with the verdict, the action at
// the current stage, the counts of results by status, and "evaluating…" while the
// session has an evaluation in flight.
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

    QString verdictText() const;
    QString actionText() const;
    QString countsText() const;
    bool evaluatingShown() const { return evaluating_; }
    QColor colour() const { return colour_; }

private:
    void refresh();

    std::shared_ptr<const Evaluation> evaluation_;
    bool evaluating_ = false;
    QString error_;
    QColor colour_;
    QLabel* verdict_;
    QLabel* action_;
    QLabel* counts_;
    QLabel* busy_;
};

}  // namespace kcx::ui
