// The histogram of the open run's token log-weights r = lp_train − lp_inf on the Corrections
// tab, with the selected correction's bounds as vertical lines (at log C, or log A and log B)
// that the pointer drags like a contract threshold: boundsDragged while moving (the panel
// re-evaluates live), dragFinished on release (one undo step per drag).
#pragma once

#include <QWidget>

#include <vector>

namespace kcx::ui {

class WeightHistogram : public QWidget {
    Q_OBJECT
public:
    explicit WeightHistogram(QWidget* parent = nullptr);
    // Counts of r over [lo, hi) in equal bins.
    void setCounts(std::vector<double> counts, double lo, double hi);
    // The bounds shown, as weights (w, not log w); empty: none.
    void setBounds(const std::vector<double>& weights);
    const std::vector<double>& bounds() const { return bounds_; }
    // The x of a weight in widget coordinates, and back (tests drive drags with these).
    double xOf(double weight) const;
    double weightAt(double x) const;
    QSize sizeHint() const override { return {480, 150}; }
    QSize minimumSizeHint() const override { return {200, 90}; }

signals:
    void boundsDragged(int index, double weight);
    void dragFinished();

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;

private:
    QRectF plot() const;
    std::vector<double> counts_;
    double lo_ = -1, hi_ = 1;
    std::vector<double> bounds_;
    int dragging_ = -1;
};

}  // namespace kcx::ui
