#include "ui/compare/compare_panel.h"

#include <QFileInfo>
#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "core/discover/discover.h"   // benjaminiHochberg
#include "core/metrics/metrics.h"
#include "core/steps/compare.h"
#include "ui/session/background.h"
#include "ui/session/session.h"
#include "ui/style/chart_style.h"
#include "ui/style/status_style.h"

namespace kcx::ui {

ComparePanel::ComparePanel(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    caption_ = new QLabel(tr("File ▸ Compare with… (Ctrl+Shift+K) opens a second run — a kernel upgrade, a fix, a new "
                             "precision — and shows where its divergence differs from this run's."),
                          this);
    caption_->setWordWrap(true);
    caption_->setTextFormat(Qt::PlainText);
    table_ = new QTableWidget(0, 7, this);
    table_->setHorizontalHeaderLabels({tr("metric"), tr("slice"), tr("A (open)"), tr("B"), tr("B − A"),
                                       tr("95 % interval"), tr("q · verdict")});
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->horizontalHeader()->setStretchLastSection(true);
    grid_ = new QTableWidget(0, 0, this);
    grid_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    grid_->setToolTip(tr("B − A in each slice and position bucket: red where B is higher, blue where lower (by "
                         "the difference over its standard error); bold where the verdict is worse or better"));
    grid_->hide();
    layout->addWidget(caption_);
    layout->addWidget(grid_);
    layout->addWidget(table_, 1);
    connect(session_, &Session::runLoaded, this, [this] {
        ++generation_;
        busy_ = false;
        comparison_.reset();
        table_->setRowCount(0);
        if (!pathB_.isEmpty())
            caption_->setText(tr("A new run is open: compare again with File ▸ Compare with…"));
    });
}

ComparePanel::~ComparePanel() = default;

void ComparePanel::setClause(const QString& clause) { clause_ = clause; }

void ComparePanel::compareWith(const QString& path) {
    const EvaluationData a = session_->data();
    if (!a) {
        emit failed(tr("Open a run first: it is A, the one compared against."));
        return;
    }
    pathB_ = path;
    CompareOptions o;
    const auto contract = session_->contract();
    const Clause* c = contract ? contract->find(clause_.toStdString()) : nullptr;
    const MetricInfo* m = c ? findMetric(c->metric) : nullptr;
    o.metrics = {m && m->level != MetricLevel::Run ? c->metric : std::string("abs_log_ratio")};
    if (c && !c->perSlice.empty())
        o.perSlice = c->perSlice;
    else if (a.run && !a.run->slices.keys.empty())
        o.perSlice = a.run->slices.keys.front() == kStepKey && a.run->slices.keys.size() > 1 ? a.run->slices.keys[1]
                                                                                             : a.run->slices.keys.front();
    if (contract)
        o.ppoClip = contract->bounds.ppoClip;
    const bool positions = a.run && (!m || m->level == MetricLevel::Token);
    const quint64 gen = ++generation_;
    busy_ = true;
    caption_->setText(tr("Comparing %1 of %2 (B) with the open run (A)…")
                          .arg(QString::fromStdString(o.metrics[0]), QFileInfo(path).fileName()));
    table_->setRowCount(0);
    QtConcurrent::run(workPool(), [a, path, o, positions]() {
        lowerThreadPriority();
        try {
            const EvaluationData b = loadEvaluationData(path.toStdString());
            Comparison all = compareRuns(a, b, o);
            // Each slice by position bucket too (runs only): the difference heatmap; BH over
            // the slices and the cells together.
            if (positions && b.run) {
                CompareOptions byPos = o;
                byPos.crossKey = "derived.pos_bucket";
                const Comparison pos = compareRuns(a, b, byPos);
                all.results.insert(all.results.end(), pos.results.begin(), pos.results.end());
                all.skipped.insert(all.skipped.end(), pos.skipped.begin(), pos.skipped.end());
            }
            std::vector<double> p;
            for (const auto& r : all.results)
                p.push_back(r.p);
            const std::vector<double> q = benjaminiHochberg(p);
            for (size_t i = 0; i < all.results.size(); ++i) {
                CompareResult& r = all.results[i];
                r.q = q[i];
                r.verdict = r.q <= o.q && r.diff > 0 ? "worse" : r.q <= o.q && r.diff < 0 ? "better" : "same";
            }
            return std::make_pair(std::make_shared<const Comparison>(std::move(all)), QString());
        } catch (const std::exception& e) {
            return std::make_pair(std::shared_ptr<const Comparison>(), QString::fromStdString(e.what()));
        }
    }).then(this, [this, gen](std::pair<std::shared_ptr<const Comparison>, QString> r) {
        if (gen != generation_)
            return;
        show(r.first, r.second);
    });
}

void ComparePanel::show(std::shared_ptr<const Comparison> c, const QString& error) {
    busy_ = false;
    comparison_ = std::move(c);
    if (!comparison_) {
        caption_->setText(tr("Could not compare with %1: %2").arg(pathB_, error));
        emit failed(error);
        return;
    }
    int worse = 0, better = 0;
    table_->setRowCount(int(comparison_->results.size()));
    for (size_t i = 0; i < comparison_->results.size(); ++i) {
        const CompareResult& r = comparison_->results[i];
        QString slice = tr("all");
        for (const auto& [k, v] : r.slice)
            slice = QString::fromStdString(k + "=" + v);
        const QStringList cells{QString::fromStdString(r.metric), slice, numberText(*r.a.value), numberText(*r.b.value),
                                numberText(r.diff), QStringLiteral("[%1, %2]").arg(numberText(r.lo), numberText(r.hi)),
                                QStringLiteral("%1 · %2").arg(numberText(r.q), QString::fromStdString(r.verdict))};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            item->setToolTip(cells[col]);
            if (col >= 2 && col <= 4)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (col == 6 || col == 4) {
                // worse reads as a failure, better as a pass, same stays plain
                if (r.verdict == "worse")
                    item->setForeground(statusColour(Status::Fail));
                else if (r.verdict == "better")
                    item->setForeground(statusColour(Status::Pass));
            }
            table_->setItem(int(i), col, item);
        }
        worse += r.verdict == "worse";
        better += r.verdict == "better";
    }
    fillGrid();
    // One metric: the caption names it, the column would only repeat it.
    bool oneMetric = true;
    for (const CompareResult& r : comparison_->results)
        oneMetric = oneMetric && r.metric == comparison_->results.front().metric;
    table_->setColumnHidden(0, oneMetric);
    table_->resizeColumnsToContents();
    caption_->setText(tr("%8 of B = %1 against the open run A: %2 of %3 differences worse, %4 better (false discovery rate "
                         "%5 over all of them; intervals over sequences: %6).%7")
                          .arg(QFileInfo(pathB_).fileName())
                          .arg(worse)
                          .arg(comparison_->results.size())
                          .arg(better)
                          .arg(comparison_->q)
                          .arg(QString::fromStdString(comparison_->interval))
                          .arg(comparison_->skipped.empty() ? QString()
                                                            : tr(" %1 not tested (a slice on one side only).")
                                                                  .arg(comparison_->skipped.size()))
                          .arg(QString::fromStdString(comparison_->aggregate + " " +
                                                      (comparison_->results.empty() ? std::string()
                                                                                    : comparison_->results.front().metric))));
    emit compared();
}

void ComparePanel::fillGrid() {
    // Rows: the slice values; columns: the position buckets; from the results with two keys.
    std::vector<std::string> rows, cols;
    auto indexOf = [](std::vector<std::string>& v, const std::string& x) {
        auto it = std::find(v.begin(), v.end(), x);
        if (it == v.end()) {
            v.push_back(x);
            return v.size() - 1;
        }
        return size_t(it - v.begin());
    };
    std::vector<std::tuple<size_t, size_t, const CompareResult*>> cells;
    for (const CompareResult& r : comparison_->results)
        if (r.slice.size() == 2 || (r.slice.size() == 1 && r.slice[0].first == "derived.pos_bucket")) {
            const std::string row = r.slice.size() == 2 ? r.slice[0].second : std::string("all");
            const std::string col = r.slice.back().second;
            cells.emplace_back(indexOf(rows, row), indexOf(cols, col), &r);
        }
    if (cells.empty()) {
        grid_->hide();
        return;
    }
    std::sort(cols.begin(), cols.end(), [](const std::string& x, const std::string& y) {
        // pos_0_64 < pos_64_256 < …: by the first number
        auto first = [](const std::string& t) {
            const size_t u = t.find('_');
            return u == std::string::npos ? 0LL : std::atoll(t.c_str() + u + 1);
        };
        return first(x) < first(y);
    });
    std::sort(rows.begin(), rows.end());
    grid_->clear();
    grid_->setRowCount(int(rows.size()));
    grid_->setColumnCount(int(cols.size()));
    QStringList colNames, rowNames;
    for (const auto& c : cols)
        colNames << QString::fromStdString(c);
    for (const auto& r : rows)
        rowNames << QString::fromStdString(r);
    grid_->setHorizontalHeaderLabels(colNames);
    grid_->setVerticalHeaderLabels(rowNames);
    for (const CompareResult& r : comparison_->results) {
        if (!(r.slice.size() == 2 || (r.slice.size() == 1 && r.slice[0].first == "derived.pos_bucket")))
            continue;
        const std::string row = r.slice.size() == 2 ? r.slice[0].second : std::string("all");
        const int ri = int(std::find(rows.begin(), rows.end(), row) - rows.begin());
        const int ci = int(std::find(cols.begin(), cols.end(), r.slice.back().second) - cols.begin());
        const double se = (r.hi - r.lo) / (2 * 1.959963984540054);
        const double z = se > 0 ? r.diff / se : 0;
        const double t = std::min(1.0, std::abs(z) / 6);
        const QColor base = z > 0 ? QColor(0xd6, 0x27, 0x28) : QColor(0x1f, 0x77, 0xb4);
        const QColor fill(int(255 + (base.red() - 255) * t), int(255 + (base.green() - 255) * t),
                          int(255 + (base.blue() - 255) * t));
        auto* item = new QTableWidgetItem(numberText(r.diff));
        item->setBackground(fill);
        item->setForeground(t > 0.6 ? QColor(Qt::white) : QColor(Qt::black));
        item->setTextAlignment(Qt::AlignCenter);
        if (r.verdict != "same") {
            QFont f = item->font();
            f.setBold(true);
            item->setFont(f);
        }
        item->setToolTip(tr("%1 × %2: B − A = %3, 95 %% [%4, %5], q %6: %7")
                             .arg(QString::fromStdString(row), QString::fromStdString(r.slice.back().second),
                                  numberText(r.diff), numberText(r.lo), numberText(r.hi), numberText(r.q),
                                  QString::fromStdString(r.verdict)));
        grid_->setItem(ri, ci, item);
    }
    grid_->resizeColumnsToContents();
    grid_->setFixedHeight(grid_->horizontalHeader()->height() + int(rows.size()) * grid_->verticalHeader()->defaultSectionSize() + 4);
    grid_->show();
}

}  // namespace kcx::ui
