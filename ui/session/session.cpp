#include "ui/session/session.h"

#include <QFile>
#include <QFileInfo>
#include <QFuture>
#include <QPointer>
#include <QSaveFile>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>
#include <filesystem>

#include "core/base/errors.h"
#include "core/contract/contract_edit.h"
#include "core/demo/demo.h"
#include "core/formats/importers.h"
#include "core/evaluate/evaluator_summary.h"
#include "core/formats/loader.h"
#include "ui/session/background.h"

namespace kcx::ui {

namespace {

// The threshold slots a clause has, by the names setThreshold() takes.
std::optional<Threshold>* slot(Clause& c, const std::string& which) {
    static std::optional<Threshold> none;
    if (which == "max")
        return &c.max;
    if (which == "min")
        return &c.min;
    if (which == "level")
        return &c.level;
    (void)none;
    return nullptr;
}

Threshold* anyThreshold(Clause& c, const std::string& which) {
    if (auto* s = slot(c, which))
        return *s ? &**s : nullptr;
    if (which == "confidence")
        return &c.confidence;
    if (which == "min_coverage")
        return c.minCoverage ? &*c.minCoverage : nullptr;
    if (which == "max_nonfinite_fraction")
        return c.maxNonfiniteFraction ? &*c.maxNonfiniteFraction : nullptr;
    return nullptr;
}

Clause* findClause(Contract& contract, const std::string& id) {
    for (Clause& c : contract.clauses)
        if (c.id == id)
            return &c;
    return nullptr;
}

// What a background job hands back: a value, or why not. Exceptions are caught in the job
// itself (QtConcurrent would wrap a std::exception into QUnhandledException and lose it).
template <class T>
struct Outcome {
    std::shared_ptr<const T> value;
    QString error;
    bool cancelled = false;
};

template <class T, class F>
Outcome<T> attempt(F&& f) {
    Outcome<T> out;
    try {
        out.value = std::make_shared<const T>(f());
    } catch (const Cancelled&) {
        out.cancelled = true;
    } catch (const std::exception& e) {
        out.error = QString::fromStdString(e.what());
    }
    return out;
}

}  // namespace

Session::Session(QObject* parent) : QObject(parent) {
    qRegisterMetaType<kcx::ui::EvaluationSnapshot>();
    qRegisterMetaType<std::shared_ptr<const kcx::MetricValues>>();
    pool_.setMaxThreadCount(1);
    pool_.setExpiryTimeout(-1);
}

Session::~Session() {
    if (loadCancel_)
        *loadCancel_ = true;
    pool_.waitForDone();
}

void Session::startLoad(std::function<Loaded(const Progress&)> load, const QString& path) {
    cancelLoad();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    loadCancel_ = cancel;
    const quint64 gen = ++loadGeneration_;
    loading_ = true;
    QPointer<Session> self(this);
    const QString what = path.isEmpty() ? tr("Building the demo run") : tr("Loading %1").arg(QFileInfo(path).fileName());
    emit loadProgress(0, what);
    auto future = QtConcurrent::run(workPool(), [load, cancel, self, gen, what]() -> Outcome<Loaded> {
        lowerThreadPriority();
        const Progress progress = [cancel, self, gen, what](double f) {
            if (self)
                QMetaObject::invokeMethod(self.data(), [self, gen, f, what] {
                    if (self && self->loadGeneration_ == gen)
                        emit self->loadProgress(f, what);
                }, Qt::QueuedConnection);
            return !*cancel;
        };
        return attempt<Loaded>([&] { return load(progress); });
    });
    future.then(this, [this, gen, path](Outcome<Loaded> out) {
        if (gen != loadGeneration_)
            return;
        loading_ = false;
        loadError_ = out.value ? QString() : out.cancelled ? tr("Loading cancelled.") : out.error;
        if (out.value) {
            // An exception here would vanish into the continuation's future: report it.
            try {
                if (out.value->summary)
                    installSummary(out.value->summary, std::move(out.value->outline), path);
                else
                    installRun(out.value->run, path);
            } catch (const std::exception& e) {
                emit loadFailed(tr("The run loaded, but showing it failed: %1").arg(QString::fromStdString(e.what())));
            }
        } else
            emit loadFailed(out.cancelled ? tr("Loading cancelled.") : out.error);
    });
}

void Session::openRun(const QString& path) {
    const std::string p = path.toStdString();
    startLoad([p](const Progress& progress) {
        // A run rewritten while we read it would be half old, half new: compare the file's
        // size and modification time before and after, and refuse if they moved.
        const auto stamp = [&p] {
            std::error_code ec;
            const auto size = std::filesystem::file_size(p, ec);
            const auto time = std::filesystem::last_write_time(p, ec);
            return std::make_pair(ec ? 0 : size, time.time_since_epoch().count());
        };
        const auto before = stamp();
        Loaded loaded;
        if (looksLikeSummary(p)) {
            report(progress, 0.0);
            loaded.summary = std::make_shared<const RunSummary>(readSummary(p));
            loaded.outline = kcx::summaryOutline(*loaded.summary);
        } else {
            loaded.run = std::make_shared<const Run>(loadRun(p, progress));
        }
        if (stamp() != before)
            throw InputError::inFile(p, "the file changed while it was being read; open it again once it is "
                                        "completely written");
        return loaded;
    }, path);
}

void Session::importRun(const QString& infPath, const QString& trainPath) {
    const std::string inf = infPath.toStdString(), train = trainPath.toStdString();
    startLoad([inf, train](const Progress& progress) {
        report(progress, 0.0);
        const ImportedSide a = readLogprobFile(inf);
        report(progress, 0.4);
        const ImportedSide b = readLogprobFile(train);
        report(progress, 0.8);
        ImportResult r = importPair(a, b);
        if (!r.ok()) {
            std::string list;
            for (size_t i = 0; i < r.mismatches.size() && i < 10; ++i) {
                const auto& m = r.mismatches[i];
                list += "\n  record " + m.id + ", position " + std::to_string(m.position) + ": inf '" + m.inf +
                        "', train '" + m.train + "'";
            }
            throw InputError::inFile(inf, "the two sides saw different tokens at " + std::to_string(r.mismatches.size()) +
                                              " position(s) in " + std::to_string(r.mismatchedRecords) +
                                              " record(s):" + list + "\n(kcx import --allow-mismatch drops them)");
        }
        if (r.run.sequenceCount() == 0)
            throw InputError::inFile(inf, "no record is present in both files (ids differ?)");
        return Loaded{std::make_shared<const Run>(std::move(r.run)), nullptr, {}};
    }, QString());
}

void Session::openDemo() {
    startLoad([](const Progress& progress) { return Loaded{std::make_shared<const Run>(makeDemoRun({}, progress)), nullptr, {}}; },
              QString());
}

void Session::cancelLoad() {
    if (loadCancel_)
        *loadCancel_ = true;
    if (loading_) {
        ++loadGeneration_;
        loading_ = false;
    }
}

void Session::installRun(std::shared_ptr<const Run> run, const QString& path) {
    summary_.reset();
    outline_ = {};
    run_ = std::move(run);
    runPath_ = path;
    rebuildEvaluator();
    emit runLoaded();
    scheduleEvaluation();
}

void Session::installSummary(std::shared_ptr<const RunSummary> summary, SummaryOutline outline, const QString& path) {
    run_.reset();
    summary_ = std::move(summary);
    outline_ = std::move(outline);
    runPath_ = path;
    rebuildEvaluator();
    emit summaryLoaded();
    scheduleEvaluation();
}

void Session::rebuildEvaluator() {
    if (!run_) {
        engine_.reset();
        evaluator_.reset();
        return;
    }
    MetricOptions mo;
    if (contract_)
        mo.ppoClip = contract_->bounds.ppoClip;
    if (!engine_ || &engine_->run() != run_.get() || engine_->options().ppoClip != mo.ppoClip)
        engine_ = std::make_shared<MetricEngine>(run_, mo);
    // The old evaluator may still be busy on the pool: it keeps its own copy alive.
    evaluator_ = contract_ ? std::make_shared<Evaluator>(engine_, *contract_) : nullptr;
}

bool Session::openContract(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        emit contractFailed(tr("%1: cannot read: %2").arg(path, file.errorString()));
        return false;
    }
    const QByteArray bytes = file.readAll();
    return setContractText(bytes.toStdString(), path, path);
}

bool Session::setContractText(const std::string& text, const QString& name, const QString& path) {
    Contract parsed;
    try {
        parsed = parseContract(text, name.toStdString());
    } catch (const std::exception& e) {
        emit contractFailed(QString::fromStdString(e.what()));
        return false;
    }
    parsed_ = parsed;
    contract_ = std::make_shared<Contract>(std::move(parsed));
    contractText_ = text;
    contractPath_ = path;
    contractName_ = name;
    if (!stage_.isEmpty() && std::find(contract_->stages.begin(), contract_->stages.end(), stage_.toStdString()) ==
                                 contract_->stages.end())
        stage_.clear();
    rebuildEvaluator();
    emit contractChanged();
    scheduleEvaluation();
    return true;
}

ClauseScope Session::clauseScope(const Clause& c, const SliceLabels* slice) {
    const auto source = clauseScopeSource(c, slice);
    return source ? source->get() : ClauseScope{};
}

std::shared_ptr<const LazyClauseScope> Session::clauseScopeSource(const Clause& c, const SliceLabels* slice) {
    if (!engine_)
        return nullptr;
    if (scopesEngine_ != engine_) {   // another run: other tokens
        scopes_.clear();
        scopesEngine_ = engine_;
    }
    const std::string key = clauseScopeKey(c, slice);
    if (scopes_.size() >= 16 && !scopes_.count(key))
        scopes_.clear();   // a mask is a byte per token: keep a few, not one per slice ever seen
    auto it = scopes_.find(key);
    if (it == scopes_.end())
        it = scopes_
                 .emplace(key, std::make_shared<const LazyClauseScope>(
                                   c, engine_, slice ? std::optional<SliceLabels>(*slice) : std::nullopt))
                 .first;
    return it->second;
}

std::optional<double> Session::threshold(const std::string& clause, const std::string& which) const {
    if (!contract_)
        return std::nullopt;
    Clause* c = findClause(*contract_, clause);
    if (!c)
        return std::nullopt;
    if (Threshold* t = anyThreshold(*c, which))
        return t->value;
    return std::nullopt;
}

void Session::setThreshold(const std::string& clause, const std::string& which, double value) {
    if (!contract_)
        return;
    Clause* c = findClause(*contract_, clause);
    Threshold* t = c ? anyThreshold(*c, which) : nullptr;
    if (!t || t->value == value)
        return;
    // Copy on write: snapshots already handed out keep the thresholds they were made with.
    contract_ = std::make_shared<Contract>(*contract_);
    anyThreshold(*findClause(*contract_, clause), which)->value = value;
    emit thresholdChanged(QString::fromStdString(clause), QString::fromStdString(which), value);
    scheduleEvaluation([clause, which, value](Evaluator& ev) { ev.setThreshold(clause, which, value); });
}

std::vector<Session::ThresholdValue> Session::thresholdEdits() const {
    std::vector<ThresholdValue> out;
    if (!contract_)
        return out;
    for (const Clause& orig : parsed_.clauses) {
        const Clause* now = findClause(*contract_, orig.id);
        Clause o = orig, n = now ? *now : Clause{};
        for (const char* which : {"max", "min", "level", "confidence", "min_coverage", "max_nonfinite_fraction"}) {
            const Threshold* a = anyThreshold(o, which);
            const Threshold* b = now ? anyThreshold(n, which) : nullptr;
            if (a && b && a->value != b->value)
                out.push_back({orig.id, which, b->value});
        }
    }
    return out;
}

std::string Session::editedContractText() const {
    if (!contract_)
        return contractText_;
    std::vector<ThresholdEdit> edits;
    Contract current = *contract_;
    for (const Clause& orig : parsed_.clauses) {
        Clause* now = findClause(current, orig.id);
        Clause o = orig;
        for (const char* which : {"max", "min", "level", "confidence", "min_coverage", "max_nonfinite_fraction"}) {
            const Threshold* a = anyThreshold(o, which);
            const Threshold* b = now ? anyThreshold(*now, which) : nullptr;
            if (a && b && a->value != b->value && a->span.known())
                edits.push_back({a->span, b->value});
        }
    }
    return applyThresholdEdits(contractText_, std::move(edits));
}

QString Session::saveContract(const QString& path) {
    const QString target = path.isEmpty() ? contractPath_ : path;
    if (target.isEmpty())
        return tr("The contract has no file yet: choose where to save it.");
    std::string text;
    try {
        text = editedContractText();
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    QSaveFile file(target);
    if (!file.open(QIODevice::WriteOnly))
        return tr("Cannot write %1: %2").arg(target, file.errorString());
    // In pieces; KCX_TEST_SAVE_DELAY_MS pauses between them so that a test can kill a save
    // in the middle of writing (tests/test_recovery.cpp).
    static const int delayMs = qEnvironmentVariableIntValue("KCX_TEST_SAVE_DELAY_MS");
    constexpr size_t kPiece = 1 << 20;
    for (size_t at = 0; at < text.size(); at += kPiece) {
        const qint64 n = qint64(std::min(kPiece, text.size() - at));
        if (file.write(text.data() + at, n) != n)
            break;   // commit() reports the error
        if (delayMs > 0) {
            file.flush();
            QThread::msleep(ulong(delayMs));
        }
    }
    if (!file.commit())
        return tr("Cannot write %1: %2").arg(target, file.errorString());
    // Re-read: the spans of edited numbers moved. The thresholds are the same, so the
    // evaluator's state stays valid; only the parsed copy and the text are replaced.
    try {
        parsed_ = parseContract(text, target.toStdString());
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    contractText_ = text;
    contractPath_ = target;
    contractName_ = target;
    emit contractSaved(target);
    return {};
}

void Session::setStage(const QString& stage) {
    if (stage == stage_)
        return;
    stage_ = stage;
    scheduleEvaluation();
}

void Session::scheduleEvaluation(std::function<void(Evaluator&)> change) {
    // A summary's contract is decided from its cells in one short pass (no evaluator state
    // to keep: the contract the job is given carries every edited threshold).
    if (!contract_ || !(summary_ || (run_ && evaluator_)))
        return;
    const quint64 gen = ++generation_;
    *latestGeneration_ = gen;
    ++pendingJobs_;
    emit evaluationStarted(gen);
    auto evaluator = summary_ ? nullptr : evaluator_;
    auto contract = std::shared_ptr<const Contract>(contract_);
    auto run = run_;
    auto summary = summary_;
    EvaluateOptions options;
    options.stage = stage_.toStdString();
    // Stale jobs still apply their change (the evaluator must see every edit, in order),
    // but skip the evaluation, and a running evaluation stops when a newer job exists:
    // the job of the newest generation does the work.
    auto latest = latestGeneration_;
    QFuture<Outcome<Evaluation>> future = QtConcurrent::run(&pool_, [=]() -> Outcome<Evaluation> {
        lowerThreadPriority();
        const ForegroundWork foreground;
        return attempt<Evaluation>([&]() -> Evaluation {
            if (change && evaluator)
                change(*evaluator);
            if (*latest != gen)
                throw Cancelled();
            if (summary)
                return evaluateContractOnSummary(*contract, *summary, options);
            const Progress progress = [latest, gen](double) { return latest->load() == gen; };
            return evaluator->evaluate(options, progress);
        });
    });
    future.then(this, [this, gen, run, summary, contract](Outcome<Evaluation> out) {
        --pendingJobs_;
        if (gen == generation_ && !out.cancelled) {
            if (!out.value) {
                emit evaluationFailed(out.error);
            } else {
                latest_ = {gen, run, contract, std::move(out.value), summary};
                emit evaluated(latest_);
            }
        }
        if (pendingJobs_ == 0)
            emit idle();
    });
}

void Session::requestMetric(const QString& name) {
    if (!engine_)
        return;
    auto engine = engine_;
    const std::string n = name.toStdString();
    QtConcurrent::run(workPool(), [engine, n] {
        lowerThreadPriority();
        const ForegroundWork foreground;
        Outcome<const MetricValues> out;
        try {
            out.value = engine->get(n);
        } catch (const std::exception& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    }).then(this, [this, name, engine](Outcome<const MetricValues> out) {
        if (engine != engine_)
            return;
        if (out.value)
            emit metricReady(name, std::move(out.value));
        else
            emit evaluationFailed(out.error);
    });
}

}  // namespace kcx::ui
