#include "ui/contract/verdict_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "ui/session/session.h"
#include "ui/style/action_style.h"

namespace kcx::ui {

VerdictBanner::VerdictBanner(QWidget* parent)
    : QFrame(parent), verdict_(new QLabel(this)), action_(new QLabel(this)), counts_(new QLabel(this)),
      busy_(new QLabel(tr("evaluating\u2026"), this)), diagnosis_(new QLabel(this)) {
    setAutoFillBackground(true);
    setFrameShape(QFrame::NoFrame);
    QFont big = verdict_->font();
    big.setPointSizeF(big.pointSizeF() * 1.6);
    big.setBold(true);
    verdict_->setFont(big);
    QFont italic = busy_->font();
    italic.setItalic(true);
    busy_->setFont(italic);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(12, 6, 12, 6);
    outer->setSpacing(2);
    auto* layout = new QHBoxLayout;
    outer->addLayout(layout);
    diagnosis_->setTextFormat(Qt::RichText);
    diagnosis_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    diagnosis_->setObjectName(QStringLiteral("bannerDiagnosis"));
    diagnosis_->hide();
    connect(diagnosis_, &QLabel::linkActivated, this, [this] { emit diagnosisActivated(); });
    outer->addWidget(diagnosis_);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(24);
    layout->addWidget(verdict_);
    layout->addWidget(action_);
    layout->addWidget(counts_, 1);
    // Long messages (a load error naming a file) are cut at the banner's edge rather than
    // widening the window or wrapping; the whole text is in the tooltip.
    counts_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    counts_->setTextFormat(Qt::PlainText);
    verdict_->setTextFormat(Qt::PlainText);
    layout->addWidget(busy_);
    refresh();
}

void VerdictBanner::setSession(Session* session) {
    session_ = session;
    connect(session, &Session::loadProgress, this, [this](double f, const QString& what) { setLoading(true, f, what); });
    for (auto loaded : {&Session::runLoaded, &Session::summaryLoaded})
        connect(session, loaded, this, [this] {
            loadError_.clear();
            setLoading(false);
        });
    connect(session, &Session::loadFailed, this, &VerdictBanner::setLoadFailed);
    connect(session, &Session::contractChanged, this, &VerdictBanner::refresh);
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

void VerdictBanner::setLoading(bool loading, double fraction, const QString& what) {
    loading_ = loading;
    loadFraction_ = fraction;
    loadWhat_ = what;
    refresh();
}

void VerdictBanner::setLoadFailed(const QString& message) {
    loading_ = false;
    loadError_ = message;
    refresh();
}

void VerdictBanner::setDiagnosis(const QString& summary) {
    diagnosis_->setVisible(!summary.isEmpty());
    diagnosis_->setText(summary.isEmpty() ? QString()
                                          : QStringLiteral("\u26a0 %1 — <a href=\"corrections\" style=\"color: inherit\">details</a>")
                                                .arg(summary.toHtmlEscaped()));
    diagnosis_->setToolTip(summary);
}

QString VerdictBanner::diagnosisText() const { return diagnosis_->isHidden() ? QString() : diagnosis_->toolTip(); }

QString VerdictBanner::verdictText() const { return verdict_->text(); }
QString VerdictBanner::actionText() const { return action_->text(); }
QString VerdictBanner::countsText() const { return counts_->text(); }

void VerdictBanner::refresh() {
    busy_->setVisible(evaluating_);
    if (!evaluation_) {
        colour_ = QColor(0x9e, 0x9e, 0x9e);
        action_->clear();
        const bool hasRun = session_ && session_->hasData(), hasContract = session_ && session_->contract();
        if (loading_) {
            verdict_->setText(tr("loading"));
            counts_->setText(loadWhat_.isEmpty() ? tr("Reading the run… %1 %").arg(int(loadFraction_ * 100))
                                                 : tr("%1 — %2 %").arg(loadWhat_).arg(int(loadFraction_ * 100)));
        } else if (!loadError_.isEmpty() && !hasRun) {
            verdict_->setText(tr("no run"));
            counts_->setText(tr("Could not load the run: %1").arg(loadError_));
        } else if (!error_.isEmpty()) {
            verdict_->setText(tr("no evaluation"));
            counts_->setText(tr("Evaluation failed: %1").arg(error_));
        } else if (evaluating_ && hasRun && hasContract) {
            verdict_->setText(tr("evaluating"));
            counts_->setText(tr("Checking every clause of the contract on the run…"));
        } else if (!hasRun) {
            verdict_->setText(tr("no run"));
            counts_->setText(hasContract ? tr("The contract's clauses are listed; open a run to check them (File ▸ Open Run…, Ctrl+O).")
                                         : tr("Open a run (Ctrl+O) and a contract, or drop them on the window."));
        } else {
            verdict_->setText(tr("no contract"));
            counts_->setText(tr("Open a contract (File ▸ Open Contract…) to check this run against it."));
        }
        busy_->setVisible(evaluating_ && !loading_);
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
    counts_->setToolTip(counts_->text());
    QPalette pal = palette();
    pal.setColor(QPalette::Window, colour_);
    pal.setColor(QPalette::WindowText, textColourOn(colour_));
    setPalette(pal);
}

}  // namespace kcx::ui
