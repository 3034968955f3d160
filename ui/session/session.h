// One open run and its contract, evaluated in the background.
//
// The Session owns the run, the metric engine and the evaluator. Every change (a loaded
// run, a contract, an edited threshold) starts a background job with a new generation
// number; jobs run one after another on a private one-thread pool (the evaluator is not
// thread-safe), a job whose generation is already stale skips its evaluation, and only
// the newest result reaches the window (hotspot's jobtracker idea). The GUI thread never
// waits.
#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/evaluate/clause_scope.h"
#include "core/evaluate/evaluator.h"
#include "core/evaluate/evaluator_summary.h"
#include "core/formats/run.h"
#include "core/metrics/metrics.h"
#include "core/summary/summary.h"
#include "core/summary/summary_views.h"

namespace kcx::ui {

// Everything one evaluation produced, handed to the window as an immutable value.
struct EvaluationSnapshot {
    quint64 generation = 0;
    std::shared_ptr<const Run> run;
    std::shared_ptr<const Contract> contract;      // the thresholds this evaluation used
    std::shared_ptr<const Evaluation> evaluation;
    std::shared_ptr<const RunSummary> summary;     // set when a summary was evaluated (no run)
};

class Session : public QObject {
    Q_OBJECT
public:
    explicit Session(QObject* parent = nullptr);
    ~Session() override;

    // Loading, in the background; progress through loadProgress(), the end through
    // runLoaded() or loadFailed(). A new load cancels the one in flight. A summary (SPEC 10,
    // chosen by content) ends with summaryLoaded() instead: the session then has a summary
    // and no run, and evaluates the contract from the summary's cells.
    void openRun(const QString& path);
    void openDemo();
    // Pairs two one-sided log-prob dumps (vLLM/OpenAI, SGLang, plain arrays: kcx import)
    // into a run, in the background like a load. Mismatched tokens fail the load, naming
    // the record, position and both tokens (the first ten).
    void importRun(const QString& infPath, const QString& trainPath);
    void cancelLoad();
    bool loading() const { return loading_; }
    // Why the last load failed (empty after a successful one).
    QString loadError() const { return loadError_; }

    // Contracts are small: parsed on the spot. Returns false and emits contractFailed()
    // with the parser's message (file:line:col) on error; the previous contract stays.
    bool openContract(const QString& path);
    bool setContractText(const std::string& text, const QString& name, const QString& path = {});

    std::shared_ptr<const Run> run() const { return run_; }
    std::shared_ptr<const RunSummary> summary() const { return summary_; }
    // The summary's steps, totals, row keys and metrics, found on the loader's thread.
    const SummaryOutline& summaryOutline() const { return outline_; }
    bool hasData() const { return run_ || summary_; }
    // What the contract is evaluated on: the run or the summary.
    EvaluationData data() const { return summary_ ? EvaluationData(summary_) : EvaluationData(run_); }
    QString runPath() const { return runPath_; }
    std::shared_ptr<const Contract> contract() const { return contract_; }
    QString contractPath() const { return contractPath_; }
    const std::string& contractText() const { return contractText_; }
    std::shared_ptr<MetricEngine> engine() const { return engine_; }
    const EvaluationSnapshot& latest() const { return latest_; }
    bool evaluating() const { return pendingJobs_ > 0; }

    // The current value of a threshold ("max", "min", "level", "confidence", ...).
    std::optional<double> threshold(const std::string& clause, const std::string& which) const;
    // Changes a threshold and re-evaluates in the background. Use ThresholdCommand (undo)
    // from the window; this is the primitive it calls.
    void setThreshold(const std::string& clause, const std::string& which, double value);
    // The contract text with every edited threshold written in place (formatting kept).
    std::string editedContractText() const;
    // Every threshold whose value differs from the contract text's (what saving would write).
    struct ThresholdValue {
        std::string clause, which;
        double value = 0;
    };
    std::vector<ThresholdValue> thresholdEdits() const;
    // Writes editedContractText() atomically to `path` (or the contract's own path) and
    // re-reads it. Returns an error message, empty on success.
    QString saveContract(const QString& path = {});

    // The tokens clause c looks at on this run (its `where` and `positions`; with `slice`,
    // one result's slice of it), computed once per run and scope and kept.
    ClauseScope clauseScope(const Clause& c, const SliceLabels* slice = nullptr);
    // The same, not yet built: for work off the GUI thread (a mask is a byte per token).
    // The same scope on the same run gives the same object.
    std::shared_ptr<const LazyClauseScope> clauseScopeSource(const Clause& c, const SliceLabels* slice = nullptr);

    // Computes a metric in the background; metricReady() delivers it (at once if cached).
    void requestMetric(const QString& name);

    void setStage(const QString& stage);
    QString stage() const { return stage_; }

signals:
    void loadProgress(double fraction, const QString& what);
    void runLoaded();
    void summaryLoaded();
    void loadFailed(const QString& message);
    void contractChanged();
    // The contract's text was written to `path` (saveContract): what is on disk changed,
    // so whatever was checked against the file (sign-off records) must be checked again.
    void contractSaved(const QString& path);
    void contractFailed(const QString& message);
    void evaluationStarted(quint64 generation);
    void evaluated(const kcx::ui::EvaluationSnapshot& snapshot);
    void evaluationFailed(const QString& message);
    void idle();   // no evaluation is queued or running any more
    void thresholdChanged(const QString& clause, const QString& which, double value);
    void metricReady(const QString& name, std::shared_ptr<const kcx::MetricValues> values);

private:
    // What a load produced: a run, or a summary.
    struct Loaded {
        std::shared_ptr<const Run> run;
        std::shared_ptr<const RunSummary> summary;
        SummaryOutline outline;   // of the summary
    };
    void installRun(std::shared_ptr<const Run> run, const QString& path);
    void installSummary(std::shared_ptr<const RunSummary> summary, SummaryOutline outline, const QString& path);
    void rebuildEvaluator();
    void scheduleEvaluation(std::function<void(Evaluator&)> change = {});
    void startLoad(std::function<Loaded(const Progress&)> load, const QString& path);

    std::shared_ptr<const Run> run_;
    std::shared_ptr<const RunSummary> summary_;
    SummaryOutline outline_;
    QString runPath_;
    std::shared_ptr<MetricEngine> engine_;
    std::shared_ptr<Evaluator> evaluator_;       // used only on pool_'s thread
    std::shared_ptr<Contract> contract_;         // current thresholds (GUI thread)
    Contract parsed_;                            // as read from the text (spans valid)
    std::string contractText_;
    QString contractPath_, contractName_;
    QString stage_;
    EvaluationSnapshot latest_;
    QThreadPool pool_;                           // one thread: evaluator jobs in order
    quint64 generation_ = 0;
    std::shared_ptr<std::atomic<quint64>> latestGeneration_ = std::make_shared<std::atomic<quint64>>(0);
    int pendingJobs_ = 0;
    std::shared_ptr<std::atomic<bool>> loadCancel_;
    quint64 loadGeneration_ = 0;
    bool loading_ = false;
    QString loadError_;
    std::shared_ptr<MetricEngine> scopesEngine_;   // the engine scopes_ were computed on
    std::map<std::string, std::shared_ptr<const LazyClauseScope>> scopes_;
};

}  // namespace kcx::ui

Q_DECLARE_METATYPE(kcx::ui::EvaluationSnapshot)
