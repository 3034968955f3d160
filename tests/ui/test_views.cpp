// The sequence drill-down, bound chain panel, promotion view and verdict banner, on
// hand-built runs and evaluations whose expected contents are worked out here.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest/QTest>

#include <cmath>
#include <fstream>

#include "core/demo/demo.h"
#include "tests/support/wait_scale.h"
#include "core/evaluate/evaluator.h"
#include "ui/contract/bounds_model.h"
#include "ui/contract/bounds_panel.h"
#include "ui/contract/promotion_model.h"
#include "ui/contract/promotion_view.h"
#include "ui/contract/verdict_banner.h"
#include "ui/corrections/corrections_panel.h"
#include "ui/corrections/weight_histogram.h"
#include "ui/drilldown/sequence_view.h"
#include "ui/drilldown/token_strip.h"
#include "ui/drilldown/token_table_model.h"
#include "ui/drilldown/topk_model.h"
#include "ui/session/session.h"
#include "ui/style/status_style.h"
#include "ui/style/value_text.h"

using namespace kcx;
using namespace kcx::ui;

namespace {

constexpr int kK = 3;
const std::vector<double> kTrain = {-0.1, -1.2, -2.5, -0.01, missingDouble(), -0.7, -3.0};
const std::vector<double> kInf = {-0.15, -1.0, -2.5, -0.2, -0.3, std::nan(""), -2.9};
const std::vector<int32_t> kTokens = {5, 7, 3, 9, 11, 5, 2};
const std::vector<std::string> kTexts = {"Hello", " world", "\n", "\t!", "", "x y", "end"};

// Two sequences (4 and 3 tokens) with text, top-k (k = 3), rewards, slices and runtime.
// Token 1 (" world", id 7): train lists 7, 5, 9; inf lists 7, 5, 11. Elsewhere each list
// holds the sampled token and id 1, then padding.
std::shared_ptr<Run> handRun() {
    auto run = std::make_shared<Run>();
    run->ids = {"a", "b"};
    run->offsets = Array<int64_t>(std::vector<int64_t>{0, 4, 7});
    run->tokens = Array<int32_t>(kTokens);
    run->lpTrain = Column(Array<double>(kTrain));
    run->lpInf = Column(Array<double>(kInf));
    run->textOffsets = {0};
    for (const auto& t : kTexts) {
        run->textPool += t;
        run->textOffsets.push_back(run->textPool.size());
    }
    std::vector<int32_t> idsT, idsI;
    std::vector<double> lpT, lpI;
    for (size_t i = 0; i < kTokens.size(); ++i) {
        if (i == 1) {
            idsT.insert(idsT.end(), {7, 5, 9});
            lpT.insert(lpT.end(), {-1.2, -1.5, -2.0});
            idsI.insert(idsI.end(), {7, 5, 11});
            lpI.insert(lpI.end(), {-1.0, -1.6, -1.9});
        } else {
            idsT.insert(idsT.end(), {kTokens[i], 1, -1});
            lpT.insert(lpT.end(), {-0.5, -3.0, missingDouble()});
            idsI.insert(idsI.end(), {kTokens[i], 1, -1});
            lpI.insert(lpI.end(), {-0.6, -2.8, missingDouble()});
        }
    }
    run->topkTrain = {kK, Array<int32_t>(idsT), Column(Array<double>(lpT))};
    run->topkInf = {kK, Array<int32_t>(idsI), Column(Array<double>(lpI))};
    run->rewardTrain = {1.0, 0.25};
    run->rewardInf = {0.5, 0.25};
    run->slices.keys = {"task"};
    run->slices.values = {{"math", "code"}};
    run->slices.codes = {0, 1};
    run->runtime = {{{"batch_size", 8}}, {{"batch_size", 16}}};
    run->checkInvariants();
    return run;
}

std::shared_ptr<const MetricValues> absLogRatio(const std::shared_ptr<const Run>& run) {
    return MetricEngine(run).get("abs_log_ratio");
}

BoundStep step(const std::string& name, std::optional<double> bound, bool vacuous) {
    BoundStep s;
    s.step = name;
    s.title = name + " title";
    s.bound = bound;
    s.input = 0.5;
    s.inputName = "epsilon";
    s.vacuous = vacuous;
    return s;
}

Result result(const std::string& clause, Status status) {
    Result r;
    r.clause = clause;
    r.status = status;
    r.message = clause + " message";
    return r;
}

EscalationRule rule(std::vector<std::string> clauses, std::vector<Status> statuses, std::vector<std::string> stages,
                    Action action) {
    EscalationRule r;
    r.clauses = std::move(clauses);
    r.statuses = std::move(statuses);
    r.stages = std::move(stages);
    r.action = action;
    return r;
}

// Stage-specific escalation: A's rule applies at canary and full only; inconclusive
// results hold at offline_ci only; C is waved through (action pass) at every stage;
// everything else goes shadow_only at shadow; the default warns.
std::shared_ptr<const Contract> stagedContract() {
    auto c = std::make_shared<Contract>();
    c->escalation.push_back(rule({"A"}, {}, {"canary", "full"}, Action::BlockPromotion));
    c->escalation.push_back(rule({}, {Status::Inconclusive}, {"offline_ci"}, Action::Hold));
    c->escalation.push_back(rule({"C"}, {}, {}, Action::Pass));
    c->escalation.push_back(rule({}, {}, {"shadow"}, Action::ShadowOnly));
    EscalationRule def;
    def.isDefault = true;
    def.action = Action::Warn;
    c->escalation.push_back(def);
    return c;
}

std::shared_ptr<const Evaluation> stagedEvaluation() {
    auto ev = std::make_shared<Evaluation>();
    ev->results = {result("A", Status::Fail), result("B", Status::Inconclusive), result("C", Status::Fail),
                   result("D", Status::Pass), result("E", Status::Fail)};
    ev->results[4].slice = SliceLabels{{"task", "math"}};
    ev->verdict = Status::Fail;
    ev->stage = "shadow";
    ev->stageActions = {{"offline_ci", Action::Hold}, {"shadow", Action::ShadowOnly},
                        {"canary", Action::BlockPromotion}, {"full", Action::BlockPromotion}};
    ev->action = Action::ShadowOnly;
    return ev;
}

QStringList clausesOf(const StageResultsModel* m) {
    QStringList out;
    for (int r = 0; r < m->rowCount(); ++r)
        out << m->index(r, StageResultsModel::ClauseColumn).data().toString();
    return out;
}

}  // namespace

class TestViews : public QObject {
    Q_OBJECT
private slots:
    void escapesInvisibleCharacters() {
        QCOMPARE(escapeTokenText(" a\n\tb\r"), QStringLiteral("\u00B7a\u21B5\u21E5b\u240D"));
        QCOMPARE(escapeTokenText(""), QStringLiteral("\u2205"));
        QCOMPARE(escapeTokenText(std::string_view("\x01", 1)), QStringLiteral("\u2401"));
    }

    void tokenTableValues() {
        auto run = handRun();
        TokenTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSequence(run, 0);
        model.setMetric(absLogRatio(run), MetricColours());
        QCOMPARE(model.rowCount(), 4);
        for (int row = 0; row < 4; ++row) {
            const size_t i = size_t(row);
            auto v = [&](int col) { return model.index(row, col).data(TokenTableModel::ValueRole).toDouble(); };
            QCOMPARE(model.index(row, TokenTableModel::Position).data().toInt(), row);
            QCOMPARE(model.index(row, TokenTableModel::TokenId).data().toInt(), kTokens[i]);
            QCOMPARE(v(TokenTableModel::PTrain), std::exp(kTrain[i]));
            QCOMPARE(v(TokenTableModel::PInf), std::exp(kInf[i]));
            QCOMPARE(v(TokenTableModel::LogRatio), kTrain[i] - kInf[i]);
            QCOMPARE(v(TokenTableModel::Metric), std::fabs(kTrain[i] - kInf[i]));
        }
        QCOMPARE(model.index(1, TokenTableModel::Text).data().toString(), QStringLiteral("\u00B7world"));
        QCOMPARE(model.index(2, TokenTableModel::Text).data().toString(), QStringLiteral("\u21B5"));
        QCOMPARE(model.headerData(TokenTableModel::Metric, Qt::Horizontal).toString(), QStringLiteral("abs_log_ratio"));

        // Sequence b: token 4 has no lp_train (missing), token 5 a NaN lp_inf (non-finite).
        model.setSequence(run, 1);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.flatIndex(0), size_t(4));
        QCOMPARE(model.index(0, TokenTableModel::PTrain).data().toString(), QStringLiteral("missing"));
        QCOMPARE(model.index(0, TokenTableModel::LogRatio).data().toString(), QStringLiteral("missing"));
        QCOMPARE(model.index(1, TokenTableModel::PInf).data().toString(), QStringLiteral("NaN"));
        QCOMPARE(model.index(1, TokenTableModel::LogRatio).data().toString(), QStringLiteral("NaN"));
        QCOMPARE(model.index(0, TokenTableModel::Text).data().toString(), QStringLiteral("\u2205"));
        QCOMPARE(model.index(2, TokenTableModel::PTrain).data(TokenTableModel::ValueRole).toDouble(), std::exp(-3.0));
    }

    void topKSideBySide() {
        auto run = handRun();
        TopKCompareModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setVocab(std::make_shared<TokenVocab>(run));
        model.setToken(run, 1);
        QCOMPARE(model.rowCount(), 4);   // 7, 5, 9 from train, then 11 from inf only
        auto cell = [&](int32_t id, int col, int role = Qt::DisplayRole) {
            return model.index(model.rowOfId(id), col).data(role);
        };
        const std::vector<int> order{7, 5, 9, 11};
        for (int r = 0; r < 4; ++r)
            QCOMPARE(model.index(r, TopKCompareModel::Id).data().toInt(), order[size_t(r)]);
        // In both lists: both ranks and log-probs.
        QCOMPARE(cell(5, TopKCompareModel::RankTrain).toInt(), 2);
        QCOMPARE(cell(5, TopKCompareModel::RankInf).toInt(), 2);
        QCOMPARE(cell(5, TopKCompareModel::LogpTrain, TopKCompareModel::ValueRole).toDouble(), -1.5);
        QCOMPARE(cell(5, TopKCompareModel::LogpInf, TopKCompareModel::ValueRole).toDouble(), -1.6);
        QCOMPARE(cell(7, TopKCompareModel::LogpInf, TopKCompareModel::ValueRole).toDouble(), -1.0);
        // Only in train's list: blank on the inf side, and the other way round.
        QCOMPARE(cell(9, TopKCompareModel::LogpTrain, TopKCompareModel::ValueRole).toDouble(), -2.0);
        QVERIFY(!cell(9, TopKCompareModel::LogpInf, TopKCompareModel::ValueRole).isValid());
        QCOMPARE(cell(9, TopKCompareModel::LogpInf).toString(), QString());
        QCOMPARE(cell(9, TopKCompareModel::RankInf).toString(), QString());
        QCOMPARE(cell(11, TopKCompareModel::LogpInf, TopKCompareModel::ValueRole).toDouble(), -1.9);
        QVERIFY(!cell(11, TopKCompareModel::LogpTrain, TopKCompareModel::ValueRole).isValid());
        QCOMPARE(cell(11, TopKCompareModel::LogpTrain).toString(), QString());
        // Texts come from where an id was sampled; id 9 was sampled at token 3.
        QCOMPARE(cell(7, TopKCompareModel::Text).toString(), QStringLiteral("\u00B7world"));
        QCOMPARE(cell(9, TopKCompareModel::Text).toString(), QStringLiteral("\u21E5!"));
        // Padding (id -1, missing log-prob) is not a row.
        model.setToken(run, 0);
        QCOMPARE(model.rowCount(), 2);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void stripClickSelectsToken() {
        auto run = handRun();
        SequenceView view;
        QSignalSpy spy(&view, &SequenceView::tokenSelected);
        view.setSequence(run, 1);
        view.setMetric(absLogRatio(run));
        view.resize(900, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.headerText().contains(QStringLiteral("task=code")));
        QCOMPARE(view.strip()->count(), 3);
        QTest::mouseClick(view.strip(), Qt::LeftButton, {}, view.strip()->tokenRect(2).center());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).value<size_t>(), size_t(6));   // sequence b starts at flat index 4
        QCOMPARE(view.selectedPosition(), 2);
        QCOMPARE(view.tokenTable()->currentIndex().row(), 2);
        QCOMPARE(view.topKModel()->rowCount(), 2);
        QTest::mouseClick(view.strip(), Qt::LeftButton, {}, view.strip()->tokenRect(0).center());
        QCOMPARE(spy.count(), 2);
        QCOMPARE(spy.at(1).at(0).value<size_t>(), size_t(4));
    }

    void selectionFollowsTableAndApi() {
        auto run = handRun();
        SequenceView view;
        QAbstractItemModelTester tester(view.tokenModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester tester2(view.topKModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy spy(&view, &SequenceView::tokenSelected);
        view.setSequence(run, 0);
        view.setMetric(absLogRatio(run));
        view.selectToken(1);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).value<size_t>(), size_t(1));
        QCOMPARE(view.strip()->selected(), 1);
        QCOMPARE(view.topKModel()->rowCount(), 4);
        // Choosing a row in the (sorted) table selects that token.
        auto* table = view.tokenTable();
        table->sortByColumn(TokenTableModel::Metric, Qt::DescendingOrder);   // |r| = 0.05, 0.2, 0, 0.19
        table->setCurrentIndex(table->model()->index(0, 0));
        QCOMPARE(view.selectedPosition(), 1);   // 0.2 is the largest
        table->setCurrentIndex(table->model()->index(1, 0));
        QCOMPARE(view.selectedPosition(), 3);
        QCOMPARE(spy.last().at(0).value<size_t>(), size_t(3));
        view.selectToken(99);   // out of range: no selection
        QCOMPARE(view.selectedPosition(), -1);
        QCOMPARE(view.topKModel()->rowCount(), 0);
    }

    void boundsModelFlagsVacuousSteps() {
        BoundsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<BoundStep> steps = {step("tv_per_token", 0.1, false), step("tv_sequence", 1.0, true),
                                        step("reward_drift", std::nullopt, false), step("pg_bias", std::nullopt, true),
                                        step("seq_ratio", 3.0, false), step("ppo_clip", 0.3, false)};
        steps[4].lower = 1 / 3.0;
        steps[5].limit = 0.2;
        steps[5].exceedsLimit = true;
        steps[0].observed = 0.2;   // above its bound
        model.setSteps(steps);
        QCOMPARE(model.rowCount(), 6);
        for (int r = 0; r < 6; ++r) {
            const QString flag = model.index(r, BoundsModel::Flag).data().toString();
            QCOMPARE(flag == QStringLiteral("vacuous"), steps[size_t(r)].vacuous);
            QCOMPARE(model.index(r, BoundsModel::Step).data(BoundsModel::VacuousRole).toBool(), steps[size_t(r)].vacuous);
            QVERIFY(!model.index(r, BoundsModel::Step).data(Qt::ToolTipRole).toString().isEmpty());
        }
        QCOMPARE(model.index(2, BoundsModel::Flag).data().toString(), QStringLiteral("no bound"));
        QCOMPARE(model.index(5, BoundsModel::Flag).data().toString(), QStringLiteral("exceeds clip"));
        QCOMPARE(model.index(4, BoundsModel::Bound).data().toString(), QStringLiteral("[0.3333, 3]"));
        QCOMPARE(model.index(0, BoundsModel::InputFrom).data().toString(), QStringLiteral("epsilon"));
        QVERIFY(BoundsModel::observedAboveBound(steps[0]));
        model.setSteps({});
        QCOMPARE(model.rowCount(), 0);
    }

    void promotionListsDriversPerStage() {
        auto contract = stagedContract();
        auto ev = stagedEvaluation();
        PromotionView view;
        view.setEvaluation(contract, ev);
        QCOMPARE(view.stageCount(), 4);
        const std::map<QString, QStringList> expected = {{"offline_ci", {"B", "A", "E"}},
                                                        {"shadow", {"A", "B", "E"}},
                                                        {"canary", {"A", "B", "E"}},
                                                        {"full", {"A", "B", "E"}}};
        const std::map<QString, QStringList> actions = {{"offline_ci", {"hold", "warn", "warn"}},
                                                       {"shadow", {"shadow_only", "shadow_only", "shadow_only"}},
                                                       {"canary", {"block_promotion", "warn", "warn"}},
                                                       {"full", {"block_promotion", "warn", "warn"}}};
        for (int i = 0; i < view.stageCount(); ++i) {
            StageResultsModel* m = view.stageModel(i);
            QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::QtTest);
            const QString stage = view.stageName(i);
            QCOMPARE(clausesOf(m), expected.at(stage));
            for (int r = 0; r < m->rowCount(); ++r)
                QCOMPARE(m->index(r, StageResultsModel::ActionColumn).data().toString(), actions.at(stage)[r]);
            QCOMPARE(view.stageActionText(i), QString::fromLatin1(actionName(ev->stageActions.at(stage.toStdString()))));
            QCOMPARE(view.isCurrentStage(i), stage == QStringLiteral("shadow"));
            // Bold exactly for the results that set the stage's action.
            for (const StageDriver& d : m->drivers())
                QCOMPARE(d.strongest, d.action == ev->stageActions.at(stage.toStdString()));
        }
        QCOMPARE(view.stageModel(0)->index(2, StageResultsModel::SliceColumn).data().toString(),
                 QStringLiteral("task=math"));
    }

    void promotionClickEmitsClause() {
        PromotionView view;
        view.setEvaluation(stagedContract(), stagedEvaluation());
        view.resize(1200, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy spy(&view, &PromotionView::clauseActivated);
        QTableView* table = view.stageTable(0);
        const QRect rect = table->visualRect(table->model()->index(0, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toString(), QStringLiteral("B"));
    }

    void verdictBannerShowsCounts() {
        VerdictBanner banner;
        QCOMPARE(banner.verdictText(), QStringLiteral("no run"));   // nothing opened yet
        banner.setLoading(true, 0.42, QStringLiteral("Reading run.jsonl"));
        QCOMPARE(banner.verdictText(), QStringLiteral("loading"));
        QCOMPARE(banner.countsText(), QStringLiteral("Reading run.jsonl — 42 %"));
        banner.setLoadFailed(QStringLiteral("run.jsonl:3: not JSON"));
        QCOMPARE(banner.verdictText(), QStringLiteral("no run"));
        QVERIFY(banner.countsText().contains(QStringLiteral("run.jsonl:3: not JSON")));
        banner.setEvaluation(stagedEvaluation());
        QCOMPARE(banner.verdictText(), QStringLiteral("FAIL"));
        QVERIFY(banner.actionText().contains(QStringLiteral("shadow_only")));
        QCOMPARE(banner.countsText(), QStringLiteral("1 pass · 3 fail · 1 inconclusive"));
        QCOMPARE(banner.colour(), statusColour(Status::Fail));
        QVERIFY(!banner.evaluatingShown());
        banner.setEvaluating(true);
        QVERIFY(banner.evaluatingShown());
    }

    // The session's evaluations reach the banner, the bound chain and the promotion view.
    void followsSession() {
        Session session;
        VerdictBanner banner;
        BoundsPanel bounds;
        PromotionView promotion;
        QAbstractItemModelTester tester(bounds.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        banner.setSession(&session);
        bounds.setSession(&session);
        promotion.setSession(&session);
        QSignalSpy loaded(&session, &Session::runLoaded);
        session.openDemo();
        QVERIFY(loaded.wait(120000));
        QVERIFY(session.openContract(QStringLiteral(KCX_SOURCE_DIR "/resources/contracts/demo.yaml")));
        QTRY_VERIFY_WITH_TIMEOUT(session.latest().evaluation != nullptr && !session.evaluating(), 120000);
        QTRY_VERIFY(!banner.evaluatingShown());
        const Evaluation& ev = *session.latest().evaluation;
        QCOMPARE(banner.verdictText(), QString::fromLatin1(statusName(ev.verdict)).toUpper());
        QCOMPARE(bounds.model()->rowCount(), int(ev.bounds.size()));
        for (int r = 0; r < bounds.model()->rowCount(); ++r)
            QCOMPARE(bounds.model()->index(r, BoundsModel::Flag).data() == QStringLiteral("vacuous"),
                     ev.bounds[size_t(r)].vacuous);
        QCOMPARE(promotion.stageCount(), int(session.contract()->stages.size()));
        // A threshold edit re-evaluates, and the banner says so until the result arrives.
        session.setThreshold("N1", "max", 10.0);
        QVERIFY(banner.evaluatingShown());
        QTRY_VERIFY_WITH_TIMEOUT(!banner.evaluatingShown(), 120000);
        QCOMPARE(session.latest().contract->find("N1")->max->value, 10.0);
    }
    // The Corrections tab (issue 21) on a run whose log-weights are r = 0.3 ± 0.05 at every
    // token (4 tokens per sequence, alternating), six sequences, steps 0 and 1, reward 1 on the
    // even sequences. Everything below is worked out by hand from those weights.
    void correctionsPanel() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("offset.jsonl"));
        {
            std::ofstream f(path.toStdString());
            for (int s = 0; s < 6; ++s)
                f << "{\"id\": \"s" << s << "\", \"step\": " << s % 2 << ", \"reward_inf\": " << (s % 2 ? 0 : 1)
                  << ", \"tokens\": [1, 2, 3, 4], \"logp_train\": [-0.65, -0.75, -0.65, -0.75], "
                     "\"logp_inf\": [-1, -1, -1, -1]}\n";
        }
        Session session;
        QUndoStack undo;
        VerdictBanner banner;
        banner.setSession(&session);
        CorrectionsPanel panel(&session, &undo);
        QObject::connect(&panel, &CorrectionsPanel::diagnosed, &banner, &VerdictBanner::setDiagnosis);
        panel.resize(900, 400);
        panel.show();
        session.openRun(path);
        QTRY_VERIFY_WITH_TIMEOUT(session.run() && panel.report() && !panel.isBusy(), test::waitMs(60000));
        // mean w = e^0.3 cosh 0.05 exactly in every sequence, so its standard error is 0: a
        // constant offset of 0.3 + log cosh 0.05 nats, named on the banner.
        const double delta = 0.3 + std::log(std::cosh(0.05));
        const auto found = panel.diagnosis()->findings();
        QCOMPARE(found.size(), size_t(1));
        QCOMPARE(found[0].cause, std::string("constant_offset"));
        QVERIFY(std::fabs(found[0].estimate - delta) < 1e-12);
        QVERIFY2(banner.diagnosisText().contains(QStringLiteral("constant offset (0.301 nats)")), qPrintable(banner.diagnosisText()));
        // The defaults: tis:2 truncates nothing (the weights are e^0.35 = 1.419 and e^0.25 = 1.284).
        const CorrectionsReport* r = panel.report().get();
        QCOMPARE(r->tokens, uint64_t(24));
        QCOMPARE(r->methods[0].method.name(), std::string("tis"));
        QCOMPARE(r->methods[0].tokens, uint64_t(0));
        // geo_mask [0.99, 1.01]: every sequence's exp(mean r) = e^0.3 is outside: all 24 tokens.
        QCOMPARE(r->methods[2].tokens, uint64_t(24));
        // Typing C = 1.3 truncates the e^0.35 tokens: half of them, in every sequence; the ESS of
        // {1.3, e^0.25} repeated; all six sequences affected, three of them rewarded.
        panel.table()->item(0, 1)->setText(QStringLiteral("1.3"));
        QCOMPARE(undo.count(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isBusy() && panel.report()->methods[0].tokens == 12, test::waitMs(60000));
        const double a = 1.3, b = std::exp(0.25);
        const CorrectionResult& tis = panel.report()->methods[0];
        QVERIFY(std::fabs(tis.ess - (a + b) * (a + b) / (2 * (a * a + b * b))) < 1e-12);
        QCOMPARE(tis.sequences, uint64_t(6));
        QCOMPARE(tis.positiveRewardShare, 0.5);
        QVERIFY(std::fabs(tis.rho - std::log(1.3)) < 1e-12);
        QCOMPARE(panel.table()->item(0, 3)->text(), QStringLiteral("50 %"));
        // A bound out of order is refused and the cell shows the old value again.
        panel.table()->item(1, 1)->setText(QStringLiteral("3"));   // token_mask A = 3 > B = 2
        QCOMPARE(undo.count(), 1);
        QCOMPARE(panel.methods()[1].params[0], 0.5);
        // Per step: two groups of three sequences, each with half its tokens truncated.
        panel.setPerSlice(QStringLiteral("step"));
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isBusy() && panel.report()->groups.size() == 2, test::waitMs(60000));
        QCOMPARE(panel.sliceTable()->rowCount(), 2);
        QCOMPARE(panel.sliceTable()->item(1, 0)->text(), QStringLiteral("1"));
        QCOMPARE(panel.sliceTable()->item(1, 2)->text(), QStringLiteral("50 %"));
        QCOMPARE(panel.report()->groups[1].report.methods[0].positiveRewardShare, 0.0);   // odd sequences: reward 0
        // Dragging the line from 1.3 to 1.6 (above both weights) is one undo step and
        // truncates nothing; undo puts 1.3 back.
        WeightHistogram* h = panel.histogram();
        QTRY_VERIFY(h->bounds().size() == 1 && h->bounds()[0] == 1.3);
        const int y = h->height() / 2;
        QTest::mousePress(h, Qt::LeftButton, {}, QPoint(int(std::lround(h->xOf(1.3))), y));
        for (double w : {1.4, 1.5, 1.6}) {
            QMouseEvent move(QEvent::MouseMove, QPointF(h->xOf(w), y), h->mapToGlobal(QPointF(h->xOf(w), y)), Qt::NoButton,
                             Qt::LeftButton, Qt::NoModifier);
            QCoreApplication::sendEvent(h, &move);
        }
        QTest::mouseRelease(h, Qt::LeftButton, {}, QPoint(int(std::lround(h->xOf(1.6))), y));
        QCOMPARE(undo.count(), 2);
        const double dragged = panel.methods()[0].params[0];
        QVERIFY2(dragged > 1.55 && dragged < 1.65, qPrintable(QString::number(dragged)));
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isBusy() && panel.report()->methods[0].tokens == 0, test::waitMs(60000));
        undo.undo();
        QCOMPARE(panel.methods()[0].params[0], 1.3);
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isBusy() && panel.report()->methods[0].tokens == 12, test::waitMs(60000));
        // SkyRL's preset: six methods, one undo step; its outlier mask [1e-4, 100] keeps every
        // sequence, its sequence TIS at 5 truncates none (exp(Σr) = e^1.2 = 3.32 per sequence).
        QVERIFY(panel.setPreset(QStringLiteral("skyrl")));
        QCOMPARE(undo.count(), 2);   // the drag's step was undone, so the preset replaces it
        QCOMPARE(panel.methods().size(), size_t(6));
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isBusy() && panel.report() && panel.report()->methods.size() == 6, test::waitMs(60000));
        QCOMPARE(panel.table()->rowCount(), 6);
        QCOMPARE(panel.report()->methods[3].method.name(), std::string("seq_reject"));
        QCOMPARE(panel.report()->methods[3].tokens, uint64_t(0));
        QCOMPARE(panel.report()->methods[4].method.name(), std::string("seq_tis"));
        QCOMPARE(panel.report()->methods[4].tokens, uint64_t(0));
        undo.undo();
        QCOMPARE(panel.methods().size(), size_t(4));
        QCOMPARE(panel.methods()[0].params[0], 1.3);
        QCOMPARE(panel.preset(), QString());
    }
    // The window holds the diagnosis and the corrections back until its verdicts and
    // heatmap are drawn (CorrectionsPanel::setHoldBack, issue 17): while held, the panel is
    // busy and nothing is computed, however long it waits; released, both arrive. A newer
    // run while held replaces the waiting jobs (the diagnosis is of the second run).
    void correctionsWaitWhileHeldBack() {
        QTemporaryDir dir;
        auto write = [&](const QString& name, double shift) {
            const QString path = dir.filePath(name);
            std::ofstream f(path.toStdString());
            for (int s = 0; s < 6; ++s)
                f << "{\"id\": \"s" << s << "\", \"tokens\": [1, 2, 3, 4], \"logp_train\": [" << -1 + shift << ", "
                  << -1.1 + shift << ", " << -1 + shift << ", " << -1.1 + shift
                  << "], \"logp_inf\": [-1, -1.1, -1, -1.1]}\n";
            return path;
        };
        const QString first = write(QStringLiteral("a.jsonl"), 0.2), second = write(QStringLiteral("b.jsonl"), 0.4);
        Session session;
        QUndoStack undo;
        CorrectionsPanel panel(&session, &undo);
        bool held = true;
        panel.setHoldBack([&] { return held; });
        session.openRun(first);
        QTRY_VERIFY_WITH_TIMEOUT(session.run() && !session.loading(), test::waitMs(60000));
        session.openRun(second);
        QTRY_VERIFY_WITH_TIMEOUT(session.run() && !session.loading() &&
                                     session.run()->ids.size() == 6 && session.runPath() == second,
                                 test::waitMs(60000));
        QTest::qWait(300);   // the panel's own timer asks again every 50 ms: still held
        QVERIFY(panel.isBusy());
        QVERIFY(!panel.diagnosis());
        QVERIFY(!panel.report());
        held = false;   // no release() call: the timer finds out by itself
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isBusy() && panel.diagnosis() && panel.report(), test::waitMs(60000));
        // The second run's offset, 0.4 nats (every log-weight is exactly 0.4): its diagnosis.
        const auto found = panel.diagnosis()->findings();
        QCOMPARE(found.size(), size_t(1));
        QCOMPARE(found[0].cause, std::string("constant_offset"));
        QVERIFY2(std::fabs(found[0].estimate - 0.4) < 1e-9, qPrintable(QString::number(found[0].estimate, 'g', 17)));
    }

    // Pictures of every widget on the demo run, for people to look at:
    // KCX_VIEWS_SCREENSHOTS=/tmp ./test_views screenshots
    void screenshots() {
        const QByteArray dir = qgetenv("KCX_VIEWS_SCREENSHOTS");
        if (dir.isEmpty())
            QSKIP("set KCX_VIEWS_SCREENSHOTS to a directory");
        auto run = std::make_shared<const Run>(makeDemoRun());
        auto contract = std::make_shared<const Contract>(
            loadContract(KCX_SOURCE_DIR "/resources/contracts/demo.yaml"));
        auto ev = std::make_shared<const Evaluation>(evaluateContract(*contract, run));
        auto metric = MetricEngine(run).get("abs_log_ratio");
        size_t worst = 0;
        for (size_t i = 0; i < metric->values.size(); ++i)
            if (std::isfinite(metric->values[i]) && !(metric->values[i] <= metric->values[worst]))
                worst = i;
        const size_t seq = run->sequenceOf(worst);
        SequenceView view;
        view.setSequence(run, seq);
        view.setMetric(metric);
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.selectToken(worst - run->seqBegin(seq));
        QTest::qWait(300);   // the vocabulary arrives from a worker
        QVERIFY(view.grab().save(QString::fromUtf8(dir) + "/views-sequence.png"));
        BoundsPanel bounds;
        bounds.setEvaluation(ev);
        bounds.resize(1400, 420);
        bounds.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bounds));
        QVERIFY(bounds.grab().save(QString::fromUtf8(dir) + "/views-bounds.png"));
        PromotionView promotion;
        promotion.setEvaluation(contract, ev);
        promotion.resize(1400, 360);
        promotion.show();
        QVERIFY(QTest::qWaitForWindowExposed(&promotion));
        QVERIFY(promotion.grab().save(QString::fromUtf8(dir) + "/views-promotion.png"));
        VerdictBanner banner;
        banner.setEvaluation(ev);
        banner.setEvaluating(true);
        banner.resize(1000, 50);
        banner.show();
        QVERIFY(QTest::qWaitForWindowExposed(&banner));
        QVERIFY(banner.grab().save(QString::fromUtf8(dir) + "/views-banner.png"));
    }
};

QTEST_MAIN(TestViews)
#include "test_views.moc"
