#include "ui/contract/verdict_banner.h"

#include <QHBoxLayout>
#include <QLabel>

#include "ui/session/session.h"
#include "ui/style/action_style.h"

namespace kcx::ui {

VerdictBanner::VerdictBanner(QWidget* parent)
    : QFrame(parent), verdict_(new QLabel(this)), action_(new QLabel(this)), counts_(new QLabel(this)),
      busy_(new QLabel(tr("evaluating\u2026"), this)) {
    setAutoFillBackground(true);
    setFrameShape(QFrame::NoFrame);
    QFont big = verdict_->font();
    big.setPointSizeF(big.pointSizeF() * 1.6);
    big.setBold(true);
    verdict_->setFont(big);
    QFont italic = busy_->font();
    italic.setItalic(true);
    busy_->setFont(italic);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(12, 6, 12, 6);
    layout->setSpacing(24);
    layout->addWidget(verdict_);
    layout->addWidget(action_);
    layout->addWidget(counts_, 1);
    layout->addWidget(busy_);
    refresh();
}

void VerdictBanner::setSession(Session* session) {
    connect(session, &Session::evaluationStarted, this, [this] { setEvaluating(true); });
    connect(session, &Session::evaluated, this, [this, session](const EvaluationSnapshot& snapshot) {
        error_.clear();
        evaluating_ = session->evaluating();
        setEvaluation(snapshot.evaluation);
    });
    connect(session, &Session::evaluationFailed, this, [this, session](const QString& message) {
        evaluating_ = session->evaluating();
        setError(message);
    });
    evaluating_ = session->evaluating();
    setEvaluation(session->latest().evaluation);
}

void VerdictBanner::setEvaluation(std::shared_ptr<const Evaluation> evaluation) {
    evaluation_ = std::move(evaluation);
    refresh();
}

void VerdictBanner::setEvaluating(bool evaluating) {
    evaluating_ = evaluating;
    refresh();
}

void VerdictBanner::setError(const QString& message) {
    error_ = message;
    refresh();
}

QString VerdictBanner::verdictText() const { return verdict_->text(); }
QString VerdictBanner::actionText() const { return action_->text(); }
QString VerdictBanner::countsText() const { return counts_->text(); }

void VerdictBanner::refresh() {
    busy_->setVisible(evaluating_);
    if (!evaluation_) {
        colour_ = QColor(0x9e, 0x9e, 0x9e);
        verdict_->setText(tr("no evaluation"));
        action_->clear();
        counts_->setText(error_.isEmpty() ? tr("Open a run and a contract.") : tr("Evaluation failed: %1").arg(error_));
    } else {
        const Status v = evaluation_->verdict;
        colour_ = statusColour(v);
        verdict_->setText(statusLabel(v).toUpper());
        action_->setText(tr("action at %1: <b>%2</b>")
                             .arg(QString::fromStdString(evaluation_->stage).toHtmlEscaped(),
                                  actionLabel(evaluation_->action)));
        int pass = 0, fail = 0, inconclusive = 0, error = 0;
        for (const Result& r : evaluation_->results) {
            pass += r.status == Status::Pass;
            fail += r.status == Status::Fail;
            inconclusive += r.status == Status::Inconclusive;
            error += r.status == Status::Error;
        }
        QString counts = tr("%1 pass · %2 fail · %3 inconclusive").arg(pass).arg(fail).arg(inconclusive);
        if (error > 0)
            counts += tr(" · %1 error").arg(error);
        if (!error_.isEmpty())
            counts += tr("  —  last evaluation failed: %1").arg(error_);
        counts_->setText(counts);
    }
    QPalette pal = palette();
    pal.setColor(QPalette::Window, colour_);
    pal.setColor(QPalette::WindowText, textColourOn(colour_));
    setPalette(pal);
}

}  // namespace kcx::ui
