// A horizontal strip of a sequence's tokens, each showing its (escaped) text on a
// background coloured by a per-token metric; tokens without a value carry the missing or
// non-finite mark. Every tenth position is numbered underneath. A click (or Left/Right)
// selects a token; only visible cells are painted, so long sequences stay cheap.
#pragma once

#include <QStringList>
#include <QWidget>

#include <vector>

#include "ui/style/metric_colours.h"

namespace kcx::ui {

class TokenStrip : public QWidget {
    Q_OBJECT
public:
    explicit TokenStrip(QWidget* parent = nullptr);

    // texts and values have one entry per position; `coloured` false paints neutral cells.
    void setTokens(QStringList texts, std::vector<double> values, const MetricColours& colours, bool coloured);
    void setSelected(int position);   // -1: none
    int selected() const { return selected_; }
    int count() const { return int(texts_.size()); }

    QRect tokenRect(int position) const;
    int positionAt(QPoint p) const;   // -1 outside every cell

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

signals:
    void tokenClicked(int position);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    void layoutCells();
    int cellHeight() const;

    QStringList texts_;
    std::vector<double> values_;
    MetricColours colours_;
    bool coloured_ = false;
    std::vector<int> x_;   // left edge of every cell, plus the right edge of the last
    int selected_ = -1;
};

}  // namespace kcx::ui
