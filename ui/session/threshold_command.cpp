#include "ui/session/threshold_command.h"

#include <QCoreApplication>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "ui/session/session.h"

namespace kcx::ui {

double snapSignificant(double v, int digits) {
    if (!std::isfinite(v) || v == 0)
        return v;
    // Through the decimal text, so that the result is the double nearest the short decimal
    // (0.25, not 0.25000000000000006) and writes back as "0.25".
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", std::clamp(digits, 1, 17), v);
    return std::strtod(buf, nullptr);
}

ThresholdCommand::ThresholdCommand(Session* session, std::string clause, std::string which, double before,
                                   double after, quint64 gesture)
    : session_(session), clause_(std::move(clause)), which_(std::move(which)), before_(before), after_(after),
      gesture_(gesture) {
    updateText();
}

quint64 ThresholdCommand::newGesture() {
    static std::atomic<quint64> next{1};
    return next++;
}

void ThresholdCommand::updateText() {
    setText(QCoreApplication::translate("ThresholdCommand", "%1 %2 = %3")
                .arg(QString::fromStdString(clause_), QString::fromStdString(which_))
                .arg(after_, 0, 'g', 6));
}

bool ThresholdCommand::mergeWith(const QUndoCommand* other) {
    auto* o = dynamic_cast<const ThresholdCommand*>(other);
    if (!o || o->gesture_ != gesture_ || o->clause_ != clause_ || o->which_ != which_)
        return false;
    after_ = o->after_;
    updateText();
    if (after_ == before_)
        setObsolete(true);   // the gesture came back to where it started: no step at all
    return true;
}

void ThresholdCommand::undo() { session_->setThreshold(clause_, which_, before_); }

void ThresholdCommand::redo() { session_->setThreshold(clause_, which_, after_); }

}  // namespace kcx::ui
