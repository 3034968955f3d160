// Undo for threshold edits. One drag (or one burst of spin-box steps) is one undo step:
// commands with the same clause, threshold and gesture id merge (Okular's
// documentcommands_p.h idea), so undo returns to the value before the gesture began.
#pragma once

#include <QUndoCommand>

#include <string>

namespace kcx::ui {

class Session;

// v rounded to `digits` significant figures: what a drag writes into the contract (a
// pointer cannot mean 0.24949903736591883; typed values stay exact).
double snapSignificant(double v, int digits = 3);

class ThresholdCommand : public QUndoCommand {
public:
    // `gesture` groups commands into one step; use newGesture() at the start of a drag.
    ThresholdCommand(Session* session, std::string clause, std::string which, double before, double after,
                     quint64 gesture);
    static quint64 newGesture();

    int id() const override { return 0x4b43; }
    bool mergeWith(const QUndoCommand* other) override;
    void undo() override;
    void redo() override;

    double before() const { return before_; }
    double after() const { return after_; }

private:
    void updateText();
    Session* session_;
    std::string clause_, which_;
    double before_, after_;
    quint64 gesture_;
};

}  // namespace kcx::ui
