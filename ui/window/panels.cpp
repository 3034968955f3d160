#include "ui/window/panels.h"

#include <QVariant>

#include "ui/charts/charts_panel.h"
#include "ui/contract/bounds_panel.h"
#include "ui/contract/contract_panel.h"
#include "ui/contract/promotion_view.h"
#include "ui/contract/verdict_banner.h"
#include "ui/drilldown/sequence_view.h"
#include "ui/session/session.h"
#include "ui/window/main_window.h"

namespace kcx::ui {

QWidget* makeVerdictBanner(Session* session, QWidget* parent) {
    auto* b = new VerdictBanner(parent);
    b->setSession(session);
    return b;
}

QWidget* makeChartsPanel(Session* session, QUndoStack* undo, QWidget* parent) {
    auto* c = new ChartsPanel(session, parent);
    c->setUndoStack(undo);
    return c;
}

QWidget* makeSequencePanel(Session* session, QWidget* parent) {
    auto* v = new SequenceView(parent);
    // The drill-down colours by the metric it was opened with (the heatmap's).
    QObject::connect(session, &Session::metricReady, v, [v](const QString& name, std::shared_ptr<const MetricValues> m) {
        if (name == v->property("kcxMetric").toString())
            v->setMetric(std::move(m));
    });
    QObject::connect(session, &Session::runLoaded, v, [v, session] {
        if (session->run() && session->run()->sequenceCount() > 0)
            v->setSequenceWhenShown(session->run(), 0);
    });
    return v;
}

QWidget* makeBoundsPanel(Session* session, QWidget* parent) {
    auto* b = new BoundsPanel(parent);
    b->setSession(session);
    return b;
}

QWidget* makePromotionPanel(Session* session, QWidget* parent) {
    auto* p = new PromotionView(parent);
    p->setSession(session);
    return p;
}

void connectPanels(MainWindow* window, QWidget*, QWidget*, QWidget*, QWidget* promotion) {
    QObject::connect(static_cast<PromotionView*>(promotion), &PromotionView::clauseActivated, window->contractPanel(),
                     &ContractPanel::selectClause);
}

void panelsSetCompact(QWidget* charts, bool compact) {
    if (auto* c = qobject_cast<ChartsPanel*>(charts))
        c->setCompact(compact);
}

void panelsSelectClause(QWidget* charts, QWidget*, const QString& clause, const std::optional<SliceLabels>& slice) {
    static_cast<ChartsPanel*>(charts)->setClause(clause, slice);
}

void showSequence(QWidget* sequencePanel, Session* session, const QString& metric, size_t sequence, size_t position) {
    auto* v = static_cast<SequenceView*>(sequencePanel);
    if (!session->run() || sequence >= session->run()->sequenceCount())
        return;
    v->setSequence(session->run(), sequence);
    v->setProperty("kcxMetric", metric);
    session->requestMetric(metric);
    v->selectToken(position);
    v->requestRoom();   // 12 token rows and every top-k row, once the tab is shown
}

}  // namespace kcx::ui
