// Help ▸ Keyboard Shortcuts, and Undo/Redo from any widget of the window.
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMenuBar>
#include <QTableWidget>
#include <QUndoStack>
#include <QVBoxLayout>

#include "ui/window/main_window.h"

namespace kcx::ui {

std::vector<std::pair<QString, QString>> MainWindow::shortcuts() const {
    std::vector<std::pair<QString, QString>> out;
    // Every menu command with a shortcut, in menu order ("File ▸ Open Run…").
    for (QAction* menu : menuBar()->actions()) {
        if (!menu->menu())
            continue;
        const QString menuName = menu->text().remove(QLatin1Char('&'));
        for (QAction* a : menu->menu()->actions())
            if (!a->shortcut().isEmpty())
                out.emplace_back(a->shortcut().toString(QKeySequence::NativeText),
                                 tr("%1 ▸ %2").arg(menuName, a->text().remove(QLatin1Char('&'))));
    }
    // Keys of the views (handled by the widgets themselves).
    const std::pair<const char*, const char*> views[] = {
        {"Ctrl+Z / Ctrl+Shift+Z", "Undo / redo a threshold edit, from any widget (also in a threshold box)"},
        {"+ / −", "Heatmap: zoom token positions in / out (with Ctrl: rows)"},
        {"Wheel", "Heatmap: zoom positions about the pointer (with Ctrl: rows)"},
        {"← → ↑ ↓", "Heatmap: pan; Sequence tab: previous / next token"},
        {"Home or 0", "Heatmap: show everything"},
        {"N / Shift+N", "Sequence tab: next / previous worst token (by |log ratio|)"},
        {"Click", "Heatmap: open the cell's most divergent sequence at its worst token"},
        {"Alt+C, S, B, P, T, M, F, W",
         "The detail tabs: Charts, Sequence, Bound chain, Promotion, Over steps, Compare, Sign-off, Where is it hiding?"},
        {"Esc", "Cancel loading a run"},
    };
    for (const auto& [keys, what] : views)
        out.emplace_back(QString::fromUtf8(keys), tr(what));
    return out;
}

void MainWindow::showShortcuts() {
    auto* dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Keyboard Shortcuts"));
    auto* layout = new QVBoxLayout(dialog);
    const auto list = shortcuts();
    auto* table = new QTableWidget(int(list.size()), 2, dialog);
    table->setHorizontalHeaderLabels({tr("Keys"), tr("Does")});
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionMode(QAbstractItemView::NoSelection);
    for (int i = 0; i < int(list.size()); ++i) {
        table->setItem(i, 0, new QTableWidgetItem(list[size_t(i)].first));
        table->setItem(i, 1, new QTableWidgetItem(list[size_t(i)].second));
    }
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(table);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    layout->addWidget(buttons);
    dialog->resize(720, 560);
    dialog->show();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    // A spin box keeps Ctrl+Z for its own text, so the window's Undo never fired while a
    // threshold box had focus. In this window's spin boxes, Undo and Redo are the window's.
    if (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool undo = key->matches(QKeySequence::Undo), redo = key->matches(QKeySequence::Redo);
        auto* w = qobject_cast<QWidget*>(watched);
        if ((undo || redo) && w && w->window() == this &&
            (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QAbstractSpinBox*>(w->parentWidget()))) {
            if (event->type() == QEvent::KeyPress) {
                if (undo)
                    undo_->undo();
                else
                    undo_->redo();
            }
            event->accept();   // an accepted override comes back as this key press
            return true;
        }
    }
    return QMainWindow::eventFilter(watched, event);
}

}  // namespace kcx::ui
