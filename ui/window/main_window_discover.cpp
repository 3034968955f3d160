// The window's way into slice discovery ("Where is it hiding?"), calibrated thresholds
// ("Suggest Thresholds from This Run") and the review report (File > Export Report).
#include <QApplication>
#include <QClipboard>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QUndoStack>

#include "core/heatmap/heatmap.h"
#include "ui/discover/discover_panel.h"
#include "ui/heatmap/heatmap_panel.h"
#include "ui/report/report_action.h"
#include "ui/session/session.h"
#include "ui/window/main_window.h"

namespace kcx::ui {

void MainWindow::buildDiscover() {
    discover_ = new DiscoverPanel(details_);
    details_->addTab(discover_, tr("&Where is it hiding?"));
    connect(session_, &Session::runLoaded, discover_, [this] { discover_->setRun(session_->engine()); });
    // A finding opens as a heatmap row: where all its conditions hold, against the rest of
    // the run, zoomed to its position range when it has one.
    connect(discover_, &DiscoverPanel::findingActivated, this, [this](const std::vector<SliceCondition>& conditions) {
        std::vector<std::pair<std::string, std::string>> pairs;
        for (const auto& c : conditions)
            pairs.emplace_back(c.key, c.value);
        heatmap_->showFinding(pairs, DiscoverPanel::positionRange(conditions));
        statusBar()->showMessage(tr("Heatmap: %1 against the rest of the run").arg(QString::fromStdString(conditionsText(pairs))),
                                 6000);
    });
    // A ready-made clause goes to the clipboard, to paste into the contract where it belongs.
    connect(discover_, &DiscoverPanel::clauseRequested, this, [this](const QString& yaml) {
        QApplication::clipboard()->setText(yaml);
        statusBar()->showMessage(tr("Clause copied: paste it under numerical: in the contract."), 8000);
    });

    QMenu* review = nullptr;
    for (QAction* a : menuBar()->actions())
        if (a->menu() && a->text() == tr("&Review"))
            review = a->menu();
    if (!review)
        review = menuBar()->addMenu(tr("&Review"));
    review->addSeparator();
    review->addAction(tr("&Where Is It Hiding?"), this, [this] {
        details_->setCurrentWidget(discover_);
        discover_->search();
    });
    review->addAction(tr("Suggest &Thresholds from This Run…"), this, [this] {
        if (!session_->run())
            return;
        showCalibrationDialog(this, session_->run(), [this](const std::string& yaml) {
            if (!maybeSave())
                return;
            undo_->clear();
            if (session_->setContractText(yaml, tr("suggested contract")))
                statusBar()->showMessage(tr("The suggested contract is open; File > Save Contract As… keeps it."), 8000);
        });
    });
}

}  // namespace kcx::ui
