// Toolbar words that a narrow window drops ("Metric:", "Rows:", …), shared by the heatmap
// and chart toolbars.
#pragma once

#include <QLabel>
#include <QLayout>
#include <QWidget>

#include <vector>

namespace kcx::ui {

// Shows or hides the labels and lays their toolbar and its parents out again at once: a
// hidden tab does not do so by itself, and its minimum width would stay the one with the
// labels and hold the window's divider.
inline void showToolbarLabels(const std::vector<QLabel*>& labels, bool shown) {
    if (labels.empty())
        return;
    for (QLabel* label : labels)
        label->setVisible(shown);
    for (QWidget* w = labels.front()->parentWidget(); w; w = w->parentWidget()) {
        if (w->layout())
            w->layout()->invalidate();
        w->updateGeometry();
        if (w->isWindow())
            break;
    }
}

}  // namespace kcx::ui
