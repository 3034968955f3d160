#include "ui/contract/threshold_editor.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QUndoStack>

#include <cmath>

#include "ui/style/metric_help.h"
#include "ui/session/session.h"
#include "ui/session/threshold_command.h"

namespace kcx::ui {

namespace {

constexpr int kSliderSteps = 10000;

// A spin box that shows a number as typed (up to 12 significant figures, no trailing
// zeros) and keeps it exact: 0.000123456 is not cut to six decimals.
class ExactSpinBox : public QDoubleSpinBox {
public:
    using QDoubleSpinBox::QDoubleSpinBox;
    QString textFromValue(double v) const override { return locale().toString(v, 'g', 12); }
};

}  // namespace

// The slider: linear over [lo, hi], or, for a positive threshold of a non-negative metric,
// logarithmic over [v / 100, v * 10] (about 0.07 % a step), so that small thresholds can
// be set finely. Values from the slider are snapped to 3 significant figures.
struct ThresholdEditor::Row {
    std::string which;
    double lo = 0, hi = 1;      // the slider's range
    bool log = false;
    QDoubleSpinBox* spin = nullptr;
    QSlider* slider = nullptr;
    quint64 gesture = 0;
    int toSlider(double v) const {
        const double f = log ? (v > 0 ? std::log(v / lo) / std::log(hi / lo) : 0.0) : (v - lo) / (hi - lo);
        return std::clamp(int(std::lround(kSliderSteps * f)), 0, kSliderSteps);
    }
    double fromSlider(int s) const {
        const double f = double(s) / kSliderSteps;
        return snapSignificant(log ? lo * std::pow(hi / lo, f) : lo + (hi - lo) * f);
    }
};

ThresholdEditor::ThresholdEditor(Session* session, QUndoStack* undo, QWidget* parent)
    : QWidget(parent), session_(session), undo_(undo) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    title_ = new QLabel(this);
    title_->setWordWrap(true);
    outer->addWidget(title_);
    form_ = new QFormLayout;
    outer->addLayout(form_);
    connect(session_, &Session::thresholdChanged, this, [this](const QString& clause) {
        if (clause == clause_)
            refreshValues();
    });
    connect(session_, &Session::contractChanged, this, &ThresholdEditor::rebuild);
    rebuild();
}

ThresholdEditor::~ThresholdEditor() {
    for (Row* r : rows_)
        delete r;
}

void ThresholdEditor::setClause(const QString& clauseId) {
    if (clauseId == clause_)
        return;
    clause_ = clauseId;
    rebuild();
}

void ThresholdEditor::rebuild() {
    while (form_->rowCount() > 0)
        form_->removeRow(0);
    for (Row* r : rows_)
        delete r;
    rows_.clear();
    const auto contract = session_->contract();
    const Clause* c = contract && !clause_.isEmpty() ? contract->find(clause_.toStdString()) : nullptr;
    if (!c) {
        title_->setText(tr("Select a clause to edit its thresholds."));
        title_->setToolTip({});
        return;
    }
    title_->setText(tr("<b>%1</b> %2").arg(clause_.toHtmlEscaped(), QString::fromStdString(c->description).toHtmlEscaped()));
    title_->setToolTip(metricMeaning(QString::fromStdString(c->metric)));
    for (const char* which : {"max", "min", "level", "confidence", "min_coverage", "max_nonfinite_fraction"}) {
        const auto v = session_->threshold(c->id, which);
        if (!v || (std::string_view(which) == "confidence" && c->family != Family::Statistical))
            continue;
        auto* row = new Row;
        row->which = which;
        const bool fraction = row->which == "confidence" || row->which == "min_coverage" ||
                              row->which == "max_nonfinite_fraction";
        if (row->which == "confidence") {
            row->lo = 0.5;
            row->hi = 0.9999;
        } else if (fraction) {
            row->lo = 0;
            row->hi = 1;
        } else if (*v > 0) {
            row->log = true;
            row->lo = *v / 100;
            row->hi = *v * 10;
        } else {
            const double mag = std::max(std::fabs(*v), 1e-9);
            row->lo = *v < 0 ? -3 * mag : 0;
            row->hi = *v > 0 ? 3 * mag : mag;
        }
        auto* box = new QWidget(this);
        auto* h = new QHBoxLayout(box);
        h->setContentsMargins(0, 0, 0, 0);
        row->spin = new ExactSpinBox(box);
        row->spin->setDecimals(12);
        row->spin->setRange(fraction ? 0 : -1e12, fraction ? 1 : 1e12);
        const double step = std::pow(10.0, std::floor(std::log10(std::max(std::fabs(*v), 1e-6))) - 1);
        row->spin->setSingleStep(step);
        row->spin->setKeyboardTracking(false);
        row->spin->setAccessibleName(QString::fromStdString(row->which));
        row->slider = new QSlider(Qt::Horizontal, box);
        row->slider->setRange(0, kSliderSteps);
        row->slider->setToolTip(row->log ? tr("Drag to set %1 (log scale, %2 to %3; 3 significant figures). Type in the box for an exact value.")
                                               .arg(QString::fromStdString(row->which))
                                               .arg(row->lo, 0, 'g', 3)
                                               .arg(row->hi, 0, 'g', 3)
                                         : tr("Drag to set %1 (3 significant figures). Type in the box for an exact value.")
                                               .arg(QString::fromStdString(row->which)));
        row->slider->setAccessibleName(QString::fromStdString(row->which) + " slider");
        h->addWidget(row->spin);
        h->addWidget(row->slider, 1);
        form_->addRow(QString::fromStdString(row->which), box);
        connect(row->spin, &QDoubleSpinBox::valueChanged, this, [this, row](double x) {
            if (row->spin->hasFocus() && row->gesture == 0)
                row->gesture = ThresholdCommand::newGesture();
            push(*row, x);
        });
        connect(row->spin, &QDoubleSpinBox::editingFinished, this, [row] { row->gesture = 0; });
        connect(row->slider, &QSlider::sliderPressed, this, [row] { row->gesture = ThresholdCommand::newGesture(); });
        connect(row->slider, &QSlider::sliderReleased, this, [row] { row->gesture = 0; });
        connect(row->slider, &QSlider::valueChanged, this, [this, row](int s) { push(*row, row->fromSlider(s)); });
        rows_.push_back(row);
    }
    if (rows_.empty())
        title_->setText(title_->text() + tr("<br>This clause has no numeric threshold."));
    refreshValues();
}

void ThresholdEditor::refreshValues() {
    for (Row* r : rows_) {
        const auto v = session_->threshold(clause_.toStdString(), r->which);
        if (!v)
            continue;
        const QSignalBlocker a(r->spin), b(r->slider);
        r->spin->setValue(*v);
        r->slider->setValue(r->toSlider(*v));
    }
}

void ThresholdEditor::push(Row& row, double value) {
    const auto before = session_->threshold(clause_.toStdString(), row.which);
    if (!before || *before == value)
        return;
    // Without a gesture (keyboard steps, a click on the slider's track) each change is a step.
    const quint64 gesture = row.gesture ? row.gesture : ThresholdCommand::newGesture();
    undo_->push(new ThresholdCommand(session_, clause_.toStdString(), row.which, *before, value, gesture));
}

}  // namespace kcx::ui
