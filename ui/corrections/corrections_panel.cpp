#include "ui/corrections/corrections_panel.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

#include "core/corrections/presets.h"
#include "ui/corrections/weight_histogram.h"
#include "ui/session/background.h"
#include "ui/session/session.h"
#include "ui/session/threshold_command.h"

namespace kcx::ui {

namespace {

constexpr int kHistogramBins = 80;

QString pct(double v) { return std::isfinite(v) ? QString::number(100 * v, 'g', 4) + " %" : QStringLiteral("–"); }
QString numText(double v) { return std::isfinite(v) ? QString::number(v, 'g', 5) : QStringLiteral("–"); }

// One bound edit; edits of one gesture (a drag, a burst of typing) merge into one step.
class CorrectionBoundCommand : public QUndoCommand {
public:
    CorrectionBoundCommand(CorrectionsPanel* panel, size_t method, size_t which, double before, double after, quint64 gesture)
        : panel_(panel), method_(method), which_(which), before_(before), after_(after), gesture_(gesture) {
        updateText();
    }
    int id() const override { return 0x4b21; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = dynamic_cast<const CorrectionBoundCommand*>(other);
        if (!o || o->panel_ != panel_ || o->method_ != method_ || o->which_ != which_ || o->gesture_ != gesture_)
            return false;
        after_ = o->after_;
        updateText();
        return true;
    }
    void undo() override { panel_->applyBound(method_, which_, before_); }
    void redo() override { panel_->applyBound(method_, which_, after_); }

private:
    void updateText() {
        const CorrectionMethod& m = panel_->methods()[method_];
        setText(QObject::tr("%1 bound %2 → %3").arg(QString::fromStdString(m.name())).arg(which_ + 1).arg(after_, 0, 'g', 4));
    }
    CorrectionsPanel* panel_;
    size_t method_, which_;
    double before_, after_;
    quint64 gesture_;
};

// A switch of preset: the whole list of methods before and after.
class CorrectionPresetCommand : public QUndoCommand {
public:
    CorrectionPresetCommand(CorrectionsPanel* panel, std::vector<CorrectionMethod> before, QString beforeName,
                            std::vector<CorrectionMethod> after, QString afterName)
        : panel_(panel), before_(std::move(before)), after_(std::move(after)), beforeName_(std::move(beforeName)),
          afterName_(std::move(afterName)) {
        setText(QObject::tr("corrections preset %1").arg(afterName_.isEmpty() ? QObject::tr("defaults") : afterName_));
    }
    void undo() override { panel_->applyMethods(before_, beforeName_); }
    void redo() override { panel_->applyMethods(after_, afterName_); }

private:
    CorrectionsPanel* panel_;
    std::vector<CorrectionMethod> before_, after_;
    QString beforeName_, afterName_;
};

struct Histograms {
    std::vector<double> tokens, sequences;
    double range = 1;
};

// Token log-weights and per-sequence mean log-weights, binned over [−L, L] with L covering
// 99.9 % of |r| and at least log 2.5 (the usual bounds must be on the axis).
Histograms histogramsOf(const Run& run) {
    Histograms h;
    std::vector<double> r, seqMean;
    r.reserve(run.tokenCount());
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        double sum = 0;
        size_t n = 0;
        for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
            const double a = run.lpTrain[i], b = run.lpInf[i];
            if (std::isfinite(a) && std::isfinite(b)) {
                r.push_back(a - b);
                sum += a - b;
                ++n;
            }
        }
        if (n)
            seqMean.push_back(sum / double(n));
    }
    std::vector<double> absR(r.size());
    for (size_t i = 0; i < r.size(); ++i)
        absR[i] = std::fabs(r[i]);
    double q = 0;
    if (!absR.empty()) {
        const size_t k = std::min(absR.size() - 1, size_t(0.999 * double(absR.size())));
        std::nth_element(absR.begin(), absR.begin() + long(k), absR.end());
        q = absR[k];
    }
    h.range = std::clamp(q * 1.1, std::log(2.5), 20.0);
    auto bin = [&](const std::vector<double>& v) {
        std::vector<double> c(kHistogramBins, 0);
        for (double x : v) {
            const double t = (std::clamp(x, -h.range, h.range) + h.range) / (2 * h.range);
            c[std::min<size_t>(kHistogramBins - 1, size_t(t * kHistogramBins))] += 1;
        }
        return c;
    };
    h.tokens = bin(r);
    h.sequences = bin(seqMean);
    return h;
}

}  // namespace

CorrectionsPanel::CorrectionsPanel(Session* session, QUndoStack* undo, QWidget* parent)
    : QWidget(parent), session_(session), undo_(undo), diagnosisLabel_(new QLabel(this)), caption_(new QLabel(this)),
      histogram_(new WeightHistogram(this)), table_(new QTableWidget(this)), perSlice_(new QComboBox(this)),
      sliceTable_(new QTableWidget(this)), presetBox_(new QComboBox(this)), methods_(defaultCorrections()) {
    auto* layout = new QVBoxLayout(this);
    diagnosisLabel_->setWordWrap(true);
    diagnosisLabel_->setTextFormat(Qt::RichText);
    diagnosisLabel_->setObjectName(QStringLiteral("diagnosis"));
    layout->addWidget(diagnosisLabel_);
    // Left: what the numbers are over, and the histogram whose bound lines drag; right: the
    // methods, and the selected one per step or slice.
    auto* split = new QSplitter(Qt::Horizontal, this);
    auto* left = new QWidget(split);
    auto* ll = new QVBoxLayout(left);
    ll->setContentsMargins(0, 0, 0, 0);
    caption_->setWordWrap(true);
    ll->addWidget(caption_);
    ll->addWidget(histogram_, 1);
    split->addWidget(left);
    auto* right = new QSplitter(Qt::Vertical, split);
    table_->setColumnCount(9);
    table_->setHorizontalHeaderLabels({tr("method"), tr("A / C"), tr("B"), tr("tokens"), tr("sequences"), tr("ESS after"),
                                       tr("ρ after"), tr("pg bias"), tr("reward > 0")});
    table_->horizontalHeaderItem(3)->setToolTip(tr("Share of tokens truncated or masked (directly or with their sequence)"));
    table_->horizontalHeaderItem(4)->setToolTip(tr("Share of sequences with at least one such token"));
    table_->horizontalHeaderItem(6)->setToolTip(tr("max |log w| over the tokens kept, weights after truncation"));
    table_->horizontalHeaderItem(7)->setToolTip(tr("SPEC 5 step 4 over the tokens kept: G·A_max·(e^ρ − 1)"));
    table_->horizontalHeaderItem(8)->setToolTip(tr("Of the affected sequences with a reward, the share whose reward was positive"));
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->setToolTip(tr("Type a bound to change it, or drag its line on the histogram (Ctrl+Z undoes)."));
    auto* methodsBox = new QWidget(right);
    auto* ml = new QVBoxLayout(methodsBox);
    ml->setContentsMargins(0, 0, 0, 0);
    auto* presetRow = new QHBoxLayout;
    presetRow->addWidget(new QLabel(tr("Corrections of:"), methodsBox));
    presetBox_->addItem(tr("KCX's defaults"), QString());
    for (const CorrectionPreset& p : correctionPresets())
        presetBox_->addItem(QString::fromStdString(p.framework), QString::fromStdString(p.framework));
    presetBox_->setToolTip(tr("A framework's own corrections and documented defaults, read from its code "
                              "(docs/corrections.md)"));
    presetRow->addWidget(presetBox_);
    presetRow->addStretch(1);
    ml->addLayout(presetRow);
    ml->addWidget(table_, 1);
    right->addWidget(methodsBox);
    auto* sliceBox = new QWidget(right);
    auto* sl = new QVBoxLayout(sliceBox);
    sl->setContentsMargins(0, 0, 0, 0);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("The selected method per:"), sliceBox));
    row->addWidget(perSlice_);
    row->addStretch(1);
    sl->addLayout(row);
    sliceTable_->setColumnCount(6);
    sliceTable_->setHorizontalHeaderLabels({tr("value"), tr("sequences"), tr("tokens"), tr("sequences affected"),
                                            tr("ESS after"), tr("reward > 0")});
    sliceTable_->verticalHeader()->hide();
    sliceTable_->verticalHeader()->setDefaultSectionSize(sliceTable_->fontMetrics().height() + 6);
    sliceTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    sliceTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    sl->addWidget(sliceTable_);
    right->addWidget(sliceBox);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    connect(table_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
        if (filling_ || (item->column() != 1 && item->column() != 2))
            return;
        bool ok = false;
        const double v = item->text().toDouble(&ok);
        const size_t m = size_t(item->row()), which = size_t(item->column() - 1);
        if (!ok || m >= methods_.size() || which >= methods_[m].params.size() ||
            !setBound(m, which, v, ThresholdCommand::newGesture()))
            showReport();   // puts the old value back
    });
    connect(table_, &QTableWidget::currentCellChanged, this, [this](int r) {
        if (!filling_ && r >= 0)
            selectMethod(r);
    });
    connect(histogram_, &WeightHistogram::boundsDragged, this, [this](int index, double w) {
        if (gesture_ == 0)
            gesture_ = ThresholdCommand::newGesture();
        const CorrectionMethod& m = methods_[size_t(selected_)];
        if (size_t(index) < m.params.size())
            setBound(size_t(selected_), size_t(index), snapSignificant(w, 3), gesture_);
    });
    connect(histogram_, &WeightHistogram::dragFinished, this, [this] { gesture_ = 0; });
    connect(presetBox_, &QComboBox::currentIndexChanged, this, [this] {
        if (!filling_)
            setPreset(presetBox_->currentData().toString());
    });
    connect(perSlice_, &QComboBox::currentIndexChanged, this, [this] {
        if (!filling_)
            recompute();
    });
    connect(session_, &Session::runLoaded, this, &CorrectionsPanel::runChanged);
    connect(session_, &Session::summaryLoaded, this, &CorrectionsPanel::runChanged);
    runChanged();
}

CorrectionsPanel::~CorrectionsPanel() = default;

QString CorrectionsPanel::diagnosisSummary() const {
    if (!diagnosis_)
        return {};
    const auto found = diagnosis_->findings();
    if (found.empty())
        return {};
    const DiagnosisTest& t = found.front();
    QString what = QString::fromStdString(t.cause);
    if (t.cause == "temperature")
        what = tr("temperature mismatch (τ = %1)").arg(t.estimate, 0, 'f', 3);
    else if (t.cause == "renormalization")
        what = tr("renormalised over a truncated set (kept mass %1 %)").arg(100 * t.estimate, 0, 'g', 3);
    else if (t.cause == "constant_offset")
        what = tr("a constant offset (%1 nats)").arg(t.estimate, 0, 'g', 3);
    else if (t.cause == "position_drift")
        what = tr("drift with position");
    else if (t.cause == "misalignment")
        what = tr("misaligned tokens (shift %1)").arg(int(t.estimate));
    QString s = tr("Diagnosis: %1 explains %2 % of the divergence").arg(what).arg(100 * t.explained, 0, 'g', 3);
    if (found.size() > 1)
        s += tr(" (and %n more; see Corrections)", nullptr, int(found.size() - 1));
    return s;
}

void CorrectionsPanel::runChanged() {
    const quint64 gen = ++runGeneration_;
    diagnosis_.reset();
    tokenCounts_.clear();
    sequenceCounts_.clear();
    filling_ = true;
    perSlice_->clear();
    perSlice_->addItem(tr("(the run only)"), QString());
    if (auto run = session_->run())
        for (const std::string& k : run->slices.keys)
            perSlice_->addItem(QString::fromStdString(k), QString::fromStdString(k));
    filling_ = false;
    auto run = session_->run();
    if (!run) {
        diagnosing_ = false;
        report_.reset();
        diagnosisLabel_->setText(session_->summary() ? tr("A summary has no token log-probs: open the run itself to "
                                                          "diagnose it and try corrections.")
                                                     : QString());
        emit diagnosed({});
        showReport();
        return;
    }
    diagnosing_ = true;
    diagnosisLabel_->setText(tr("<i>Diagnosing…</i>"));
    emit diagnosed({});
    launch(pendingDiagnosis_, [this, run, gen] {
        auto* watch = new QFutureWatcher<std::pair<std::shared_ptr<const Diagnosis>, Histograms>>(this);
        connect(watch, &QFutureWatcherBase::finished, this, [this, watch, gen] {
            watch->deleteLater();
            if (gen != runGeneration_)
                return;
            auto [d, h] = watch->result();
            diagnosis_ = d;
            tokenCounts_ = h.tokens;
            sequenceCounts_ = h.sequences;
            range_ = h.range;
            diagnosing_ = false;
            showDiagnosis();
            updateHistogram();
            emit diagnosed(diagnosisSummary());
        });
        watch->setFuture(QtConcurrent::run(workPool(), [run] {
            return std::make_pair(std::make_shared<const Diagnosis>(diagnose(*run)), histogramsOf(*run));
        }));
    });
    recompute();
}

bool CorrectionsPanel::setBound(size_t method, size_t which, double value, quint64 gesture) {
    if (method >= methods_.size() || which >= methods_[method].params.size() || !std::isfinite(value))
        return false;
    CorrectionMethod m = methods_[method];
    const double before = m.params[which];
    m.params[which] = value;
    if (!checkCorrection(m))
        return false;
    if (before == value)
        return true;
    if (undo_)
        undo_->push(new CorrectionBoundCommand(this, method, which, before, value, gesture));
    else
        applyBound(method, which, value);
    return true;
}

bool CorrectionsPanel::setPreset(const QString& framework) {
    std::vector<CorrectionMethod> methods;
    if (framework.isEmpty()) {
        methods = defaultCorrections();
    } else {
        const CorrectionPreset* p = findPreset(framework.toStdString());
        if (!p)
            return false;
        for (const PresetMethod& m : p->methods)
            methods.push_back(*parseCorrection(m.method));
    }
    if (framework == preset_)
        return true;
    if (undo_)
        undo_->push(new CorrectionPresetCommand(this, methods_, preset_, methods, framework));
    else
        applyMethods(methods, framework);
    return true;
}

void CorrectionsPanel::applyMethods(const std::vector<CorrectionMethod>& methods, const QString& preset) {
    methods_ = methods;
    preset_ = preset;
    selected_ = 0;
    filling_ = true;
    presetBox_->setCurrentIndex(std::max(0, presetBox_->findData(preset)));
    filling_ = false;
    report_.reset();
    showReport();
    updateHistogram();
    recompute();
}

void CorrectionsPanel::applyBound(size_t method, size_t which, double value) {
    methods_[method].params[which] = value;
    selected_ = int(method);
    updateHistogram();
    recompute();
}

void CorrectionsPanel::selectMethod(int method) {
    if (method < 0 || size_t(method) >= methods_.size() || method == selected_)
        return;
    selected_ = method;
    updateHistogram();
    showSlices();
}

void CorrectionsPanel::setPerSlice(const QString& key) {
    const int i = perSlice_->findData(key);
    perSlice_->setCurrentIndex(std::max(0, i));
}

void CorrectionsPanel::recompute() {
    auto run = session_->run();
    const quint64 gen = ++generation_;
    if (!run) {
        busy_ = false;
        return;
    }
    busy_ = true;
    CorrectionsOptions o;
    o.perSlice = perSlice_->currentData().toString().toStdString();
    if (auto c = session_->contract()) {
        o.gradNorm = c->bounds.gradNorm;
        o.advantageMax = c->bounds.advantageMax;
    }
    const std::vector<CorrectionMethod> methods = methods_;
    launch(pendingCorrections_, [this, run, methods, o, gen] {
        auto* watch = new QFutureWatcher<std::shared_ptr<const CorrectionsReport>>(this);
        connect(watch, &QFutureWatcherBase::finished, this, [this, watch, gen] {
            watch->deleteLater();
            if (gen != generation_)
                return;
            report_ = watch->result();
            busy_ = false;
            showReport();
            emit evaluated();
        });
        watch->setFuture(QtConcurrent::run(workPool(), [run, methods, o] {
            return std::make_shared<const CorrectionsReport>(applyCorrections(*run, methods, o));
        }));
    });
}

void CorrectionsPanel::setHoldBack(std::function<bool()> held) { holdBack_ = std::move(held); }

void CorrectionsPanel::launch(std::function<void()>& pending, std::function<void()> start) {
    if (holdBack_ && holdBack_()) {
        pending = std::move(start);   // a newer job of the same kind replaces a waiting one
        // The window calls release() when it settles; the timer also asks every 50 ms, so
        // nothing waits for ever on a state change that came without a signal.
        if (!holdTimer_) {
            holdTimer_ = new QTimer(this);
            holdTimer_->setInterval(50);
            connect(holdTimer_, &QTimer::timeout, this, &CorrectionsPanel::release);
        }
        holdTimer_->start();
        return;
    }
    pending = nullptr;
    start();
}

void CorrectionsPanel::release() {
    if (holdBack_ && holdBack_())
        return;
    if (holdTimer_)
        holdTimer_->stop();
    // The diagnosis first: its line is the one the verdict banner shows.
    for (auto* pending : {&pendingDiagnosis_, &pendingCorrections_})
        if (*pending) {
            auto start = std::move(*pending);
            *pending = nullptr;
            start();
        }
}

void CorrectionsPanel::showReport() {
    filling_ = true;
    table_->setRowCount(int(methods_.size()));
    for (size_t i = 0; i < methods_.size(); ++i) {
        const CorrectionMethod& m = methods_[i];
        const CorrectionResult* c = report_ && i < report_->methods.size() ? &report_->methods[i] : nullptr;
        auto set = [&](int col, const QString& text, bool editable = false) {
            auto* item = new QTableWidgetItem(text);
            Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
            if (editable)
                f |= Qt::ItemIsEditable;
            item->setFlags(f);
            if (col >= 3)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            table_->setItem(int(i), col, item);
        };
        set(0, QString::fromStdString(m.name()));
        set(1, QString::number(m.params[0], 'g', 6), true);
        set(2, m.params.size() > 1 ? QString::number(m.params[1], 'g', 6) : QString(), m.params.size() > 1);
        set(3, c ? pct(c->tokenFraction) : QString());
        set(4, c ? pct(c->sequenceFraction) : QString());
        set(5, c ? numText(c->ess) : QString());
        set(6, c ? numText(c->rho) : QString());
        set(7, c ? numText(c->pgBias) : QString());
        set(8, c && c->affectedWithReward ? tr("%1 of %2").arg(pct(c->positiveRewardShare)).arg(c->affectedWithReward)
                                          : QStringLiteral("–"));
    }
    table_->selectRow(selected_);
    filling_ = false;
    if (report_) {
        caption_->setText(tr("%1 tokens with both log-probs, %2 sequences · ESS before %3 · ρ before %4 · pg bias %5")
                              .arg(report_->tokens)
                              .arg(report_->sequences)
                              .arg(numText(report_->essBefore), numText(report_->rhoBefore),
                                   report_->absoluteBias ? tr("with the contract's G and A_max") : tr("in units of G·A_max")));
        caption_->setToolTip(tr("pg bias: SPEC 5 step 4 over the tokens each correction keeps, G·A_max·(e^ρ − 1). Set "
                                "bounds.grad_norm and bounds.advantage_max in the contract for an absolute bound."));
    } else {
        caption_->setText(session_->run() ? tr("<i>Computing…</i>") : tr("Open a run to see what each correction would do."));
    }
    showSlices();
}

void CorrectionsPanel::showSlices() {
    const bool have = report_ && !report_->sliceKey.empty();
    sliceTable_->setRowCount(have ? int(report_->groups.size()) : 0);
    if (!have)
        return;
    for (size_t g = 0; g < report_->groups.size(); ++g) {
        const CorrectionsGroup& grp = report_->groups[g];
        const CorrectionResult* c = size_t(selected_) < grp.report.methods.size() ? &grp.report.methods[size_t(selected_)] : nullptr;
        const QStringList cells = {QString::fromStdString(grp.value), QString::number(grp.report.sequences),
                                   c ? pct(c->tokenFraction) : QString(), c ? pct(c->sequenceFraction) : QString(),
                                   c ? numText(c->ess) : QString(),
                                   c && c->affectedWithReward
                                       ? tr("%1 of %2").arg(pct(c->positiveRewardShare)).arg(c->affectedWithReward)
                                       : QStringLiteral("–")};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col >= 1)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            sliceTable_->setItem(int(g), col, item);
        }
    }
}

void CorrectionsPanel::showDiagnosis() {
    if (!diagnosis_)
        return;
    const auto found = diagnosis_->findings();
    QString html;
    if (found.empty()) {
        html = tr("<b>Diagnosis:</b> nothing systematic beyond noise (%1 tokens, %2 sequences; ").arg(diagnosis_->tokens).arg(diagnosis_->sequences);
        QStringList notRun;
        for (const DiagnosisTest& t : diagnosis_->tests)
            if (!t.ran)
                notRun << QString::fromStdString(t.cause);
        html += notRun.isEmpty() ? tr("every test ran).") : tr("not tested: %1).").arg(notRun.join(", "));
    } else {
        html = tr("<b>Diagnosis:</b><ul style='margin:0'>");
        for (const DiagnosisTest& t : found)
            html += tr("<li><b>%1</b> — estimate %2, explains %3 %: %4</li>")
                        .arg(QString::fromStdString(t.cause), QString::number(t.estimate, 'g', 4),
                             QString::number(100 * t.explained, 'g', 3), QString::fromStdString(t.evidence).toHtmlEscaped());
        html += QStringLiteral("</ul>");
    }
    diagnosisLabel_->setText(html);
}

void CorrectionsPanel::updateHistogram() {
    const CorrectionMethod& m = methods_[size_t(selected_)];
    const bool perSequence = m.kind == CorrectionMethod::Kind::GeoMask;
    histogram_->setCounts(perSequence ? sequenceCounts_ : tokenCounts_, -range_, range_);
    histogram_->setToolTip(perSequence ? tr("Per-sequence mean log-weight (geo_mask's exp(mean r)), log count. Drag a bound.")
                                       : tr("Token log-weights r = lp_train − lp_inf, log count. Drag a bound."));
    histogram_->setBounds(m.params);
}

}  // namespace kcx::ui
