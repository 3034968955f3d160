#include "ui/signoff/signoff_panel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QFileSystemWatcher>
#include <QTimer>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <map>

#include "core/base/sha256.h"
#include "core/contract/contract.h"
#include "ui/session/background.h"
#include "ui/session/session.h"
#include "ui/signoff/signoff_dialog.h"
#include "ui/signoff/signoff_model.h"

namespace kcx::ui {

namespace {

struct CheckInput {
    std::vector<SignoffEntry> entries;
    std::string contractPath, runPath;
    EvaluationData run;   // the run or summary read from runPath
};

// Hashes each file once and evaluates once per stage, then compares every record.
std::vector<SignoffEntry> checkAll(CheckInput in) {
    SignoffNow base;
    QStringList unchecked;
    QString failure;
    try {
        if (!in.contractPath.empty()) {
            base.contractSha256 = sha256File(in.contractPath);
            base.contractName = in.contractPath;
        } else {
            unchecked << QObject::tr("contract: the contract is not a saved file");
        }
        if (!in.runPath.empty()) {
            base.runSha256 = sha256File(in.runPath);
            base.runName = in.runPath;
        } else {
            unchecked << QObject::tr("run: the run is not a file (the built-in demo)");
        }
        base.trust = loadTrust();   // the trusted signers: KCX_TRUSTED_KEYS or ~/.config/kcx/trusted_keys
    } catch (const std::exception& e) {
        failure = QString::fromStdString(e.what());
    }
    const bool evaluate = failure.isEmpty() && !in.contractPath.empty() && !in.runPath.empty() && in.run;
    if (failure.isEmpty() && !evaluate)
        unchecked << QObject::tr("results: need both the contract and the run as files");
    std::optional<Contract> contract;
    std::map<std::string, EvaluatedNow> byStage;   // stage -> what evaluating there says (or why not)
    for (auto& e : in.entries) {
        if (!e.record)
            continue;
        if (!failure.isEmpty()) {
            e.error = QObject::tr("cannot check: %1").arg(failure);
            continue;
        }
        SignoffNow now = base;
        if (evaluate) {
            try {
                if (!contract)
                    contract = loadContract(in.contractPath);
                auto it = byStage.find(e.record->stage);
                if (it == byStage.end()) {
                    EvaluatedNow v;
                    try {
                        EvaluateOptions options;
                        options.stage = e.record->stage;
                        v = evaluatedNow(evaluateContractOn(*contract, in.run, options));
                    } catch (const std::invalid_argument& x) {
                        v.error = x.what();
                    }
                    it = byStage.emplace(e.record->stage, v).first;
                }
                applyEvaluated(now, it->second);
            } catch (const std::exception& x) {
                e.error = QObject::tr("cannot evaluate the contract: %1").arg(QString::fromStdString(x.what()));
                continue;
            }
        }
        e.verification = verifySignoff(*e.record, now);
        e.unchecked = unchecked;
    }
    return std::move(in.entries);
}

SignoffEntry readEntry(const QString& path) {
    SignoffEntry e;
    e.path = path;
    try {
        e.record = readSignoff(path.toStdString());
    } catch (const std::exception& x) {
        e.error = QString::fromStdString(x.what());
    }
    return e;
}

}  // namespace

SignoffPanel::SignoffPanel(Session* session, QWidget* parent)
    : QWidget(parent), session_(session), model_(new SignoffModel(this)),
      generation_(std::make_shared<std::atomic<quint64>>(0)) {
    table_ = new QTableView;
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->setAlternatingRowColors(true);
    table_->setWordWrap(false);
    summary_ = new QLabel;
    summary_->setTextFormat(Qt::PlainText);
    detail_ = new QLabel;
    detail_->setTextFormat(Qt::PlainText);   // reviewer names and file names come from files
    detail_->setWordWrap(true);
    detail_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    detail_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    auto* sign = sign_ = new QPushButton(tr("Sign &Off…"));
    auto* open = new QPushButton(tr("Open &Record…"));
    auto* recheck = new QPushButton(tr("Re-&check"));
    recheck->setToolTip(tr("Read the records again and verify them against the files now"));
    connect(sign, &QPushButton::clicked, this, &SignoffPanel::signOff);
    connect(open, &QPushButton::clicked, this, &SignoffPanel::openRecordDialog);
    connect(recheck, &QPushButton::clicked, this, &SignoffPanel::refresh);
    trust_ = new QPushButton(tr("&Trust Signer…"));
    trust_->setToolTip(tr("List the selected record's key as its reviewer's in your trusted signers (%1), "
                          "after comparing the full key with the reviewer")
                           .arg(QString::fromStdString(defaultTrustedKeysPath())));
    trust_->setEnabled(false);
    connect(trust_, &QPushButton::clicked, this, [this] {
        const QModelIndex i = table_->currentIndex();
        if (!i.isValid())
            return;
        const QString error = trustSigner(model_->entries()[size_t(i.row())].path);
        if (!error.isEmpty())
            QMessageBox::warning(this, tr("Trust Signer"), error);
    });
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(summary_, 1);
    buttons->addWidget(trust_);
    buttons->addWidget(recheck);
    buttons->addWidget(open);
    buttons->addWidget(sign);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buttons);
    layout->addWidget(table_, 2);
    layout->addWidget(detail_, 1);

    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &SignoffPanel::showSelected);
    connect(model_, &QAbstractItemModel::dataChanged, this, &SignoffPanel::showSelected);
    connect(model_, &QAbstractItemModel::modelReset, this, &SignoffPanel::showSelected);
    connect(session_, &Session::contractChanged, this, &SignoffPanel::refresh);
    // A save rewrites the signed file: every record is checked against it again at once,
    // so that "verified" never outlives the bytes it was verified against.
    connect(session_, &Session::contractSaved, this, &SignoffPanel::refresh);
    connect(session_, &Session::thresholdChanged, this, &SignoffPanel::markUnsavedEdits);
    connect(session_, &Session::runLoaded, this, &SignoffPanel::refresh);
    connect(session_, &Session::summaryLoaded, this, &SignoffPanel::refresh);
    for (auto signal : {&Session::runLoaded, &Session::summaryLoaded, &Session::contractChanged})
        connect(session_, signal, this, &SignoffPanel::updateSignButton);
    connect(session_, &Session::loadFailed, this, &SignoffPanel::updateSignButton);
    watcher_ = new QFileSystemWatcher(this);
    settle_ = new QTimer(this);
    settle_->setSingleShot(true);
    settle_->setInterval(300);   // writers replace (write + rename) or write in bursts
    connect(settle_, &QTimer::timeout, this, &SignoffPanel::refresh);
    connect(watcher_, &QFileSystemWatcher::fileChanged, settle_, qOverload<>(&QTimer::start));
    connect(watcher_, &QFileSystemWatcher::directoryChanged, settle_, qOverload<>(&QTimer::start));
    updateSignButton();
    refresh();
}

void SignoffPanel::updateSignButton() {
    const QString why = cannotSignRunReason();
    sign_->setEnabled(why.isEmpty());
    sign_->setToolTip(why.isEmpty() ? tr("Sign off the contract and run as they are saved now (Ctrl+Alt+S)")
                                    : tr("Cannot sign off: %1").arg(why));
}

QString SignoffPanel::cannotSignRunReason() const {
    if (!session_->contract())
        return tr("Open a contract first.");
    if (!session_->hasData())
        return tr("Open a run first.");
    if (session_->runPath().isEmpty())
        return tr("The built-in demo run is not a file; write it with `kcx demo --out DIR` and open that "
                  "to sign off: a record binds the run file's bytes.");
    if (session_->loading())
        return tr("Wait until the run has loaded.");
    return {};
}

QString SignoffPanel::cannotSignReason() const {
    if (session_->contract() && session_->contractPath().isEmpty())
        return tr("Save the contract to a file first: a record binds the contract file's bytes.");
    return cannotSignRunReason();
}

void SignoffPanel::signOff() {
    auto refuse = [this](const QString& why) {
        emit signingFailed(why);
        if (!qEnvironmentVariableIsSet("KCX_NO_DIALOGS"))
            QMessageBox::information(this, tr("Sign Off"), why);
    };
    // What saving cannot fix is said first: the built-in demo is refused before any Save As.
    if (const QString why = cannotSignRunReason(); !why.isEmpty())
        return refuse(why);
    if (beforeSigning_ && !beforeSigning_())
        return;
    if (const QString why = cannotSignReason(); !why.isEmpty())
        return refuse(why);
    const auto& snap = session_->latest();
    QString verdict = tr("not evaluated yet");
    if (snap.evaluation)
        verdict = tr("verdict %1, action at %2: %3")
                      .arg(QString::fromStdString(statusName(snap.evaluation->verdict)),
                           QString::fromStdString(snap.evaluation->stage),
                           QString::fromStdString(actionName(snap.evaluation->action)));
    QStringList stages;
    for (const auto& s : session_->contract()->stages)
        stages << QString::fromStdString(s);
    SignoffDialog dialog(session_->contractPath(), session_->runPath(), stages, verdict, this);
    if (snap.evaluation)
        dialog.setFailing(snap.evaluation->verdict == Status::Fail || snap.evaluation->action >= Action::BlockPromotion);
    const int i = dialog.stageBox()->findText(session_->stage());
    if (i >= 0)
        dialog.stageBox()->setCurrentIndex(i);
    if (dialog.exec() != QDialog::Accepted)
        return;
    signWith(dialog.request(), dialog.keyPath(), dialog.outPath());
}

void SignoffPanel::signWith(const SignoffRequest& request, const QString& keyPath, const QString& outPath) {
    ++jobs_;
    const EvaluationData run = session_->data();
    QtConcurrent::run(workPool(), [request, run, key = keyPath.toStdString(), out = outPath.toStdString()]() -> QString {
        lowerThreadPriority();
        try {
            const SecretKey secret = readSecretKey(key);
            writeSignoff(signFiles(request, run, secret), out);
            return {};
        } catch (const std::exception& e) {
            return QString::fromStdString(e.what());
        }
    }).then(this, [this, outPath](const QString& error) {
        --jobs_;
        if (!error.isEmpty()) {
            emit signingFailed(error);
            if (!qEnvironmentVariableIsSet("KCX_NO_DIALOGS"))
                QMessageBox::warning(this, tr("Sign Off"), tr("Could not sign: %1").arg(error));
            return;
        }
        const auto beside = signoffsBeside(session_->contractPath().toStdString());
        if (std::find(beside.begin(), beside.end(), outPath.toStdString()) == beside.end() && !opened_.contains(outPath))
            opened_ << outPath;
        refresh();
        emit signedOff(outPath);
    });
}

void SignoffPanel::openRecord(const QString& path) {
    if (!opened_.contains(path))
        opened_ << path;
    refresh();
}

void SignoffPanel::openRecordDialog() {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open Sign-off Record"), QFileInfo(session_->contractPath()).absolutePath(),
                                                   tr("Sign-off records (*.signoff.json *.json);;All files (*)"));
    if (!f.isEmpty())
        openRecord(f);
}

void SignoffPanel::watchFiles() {
    QStringList want;
    const QString contract = session_->contractPath();
    if (!contract.isEmpty()) {
        want << contract << QFileInfo(contract).absolutePath();
    }
    if (!session_->runPath().isEmpty())
        want << session_->runPath();
    for (const SignoffEntry& e : model_->entries())
        want << e.path;
    want.removeDuplicates();
    QStringList drop;
    for (const QString& p : watcher_->files() + watcher_->directories())
        if (!want.contains(p))
            drop << p;
    if (!drop.isEmpty())
        watcher_->removePaths(drop);
    QStringList add;
    for (const QString& p : want)   // a file replaced by a rename is watched again here
        if (QFileInfo::exists(p) && !watcher_->files().contains(p) && !watcher_->directories().contains(p))
            add << p;
    if (!add.isEmpty())
        watcher_->addPaths(add);
}

void SignoffPanel::refresh() {
    QStringList paths;
    if (!session_->contractPath().isEmpty())
        for (const auto& p : signoffsBeside(session_->contractPath().toStdString()))
            paths << QString::fromStdString(p);
    for (const auto& p : opened_)
        if (!paths.contains(p))
            paths << p;
    // Records are read in the background with the check (issue 16: a large file beside the
    // contract froze the window while it was read); until then each row says "checking".
    std::vector<SignoffEntry> entries;
    for (const auto& p : paths) {
        SignoffEntry e;
        e.path = p;
        entries.push_back(std::move(e));
    }
    const QString selected = table_->currentIndex().isValid() ? model_->entries()[size_t(table_->currentIndex().row())].path : QString();
    model_->setEntries(entries);
    watchFiles();
    if (const int row = model_->rowOf(selected); row >= 0)
        table_->selectRow(row);
    else if (!entries.empty())
        table_->selectRow(0);
    updateSummary();

    const quint64 gen = ++*generation_;
    ++jobs_;
    CheckInput in{std::move(entries), session_->contractPath().toStdString(), session_->runPath().toStdString(), session_->data()};
    QtConcurrent::run(workPool(), [in = std::move(in)]() mutable {
        lowerThreadPriority();
        for (auto& e : in.entries)
            e = readEntry(e.path);
        // Nothing to check: no hashing (a run can be gigabytes, and hashing it would
        // compete with the evaluation for the processor).
        if (std::none_of(in.entries.begin(), in.entries.end(), [](const SignoffEntry& e) { return bool(e.record); }))
            return std::move(in.entries);
        return checkAll(std::move(in));
    }).then(this, [this, gen](std::vector<SignoffEntry> checkedEntries) {
        --jobs_;
        if (gen != generation_->load())
            return;   // a newer check is on its way
        const bool edited = !session_->thresholdEdits().empty();
        for (auto& e : checkedEntries) {
            e.editedSinceSigned = edited;
            model_->updateEntry(e);
        }
        updateSummary();
        emit checked();
    });
}

QString SignoffPanel::trustSigner(const QString& recordPath) {
    const int row = model_->rowOf(recordPath);
    if (row < 0 || !model_->entries()[size_t(row)].record)
        return tr("%1 is not a readable record in this list.").arg(recordPath);
    const SignoffRecord& r = *model_->entries()[size_t(row)].record;
    if (!signatureValid(r))
        return tr("The record's signature is not valid: its key proves nothing and is not added.");
    const std::string file = defaultTrustedKeysPath();
    if (file.empty())
        return tr("There is no trusted keys file (set KCX_TRUSTED_KEYS or HOME).");
    if (!qEnvironmentVariableIsSet("KCX_NO_DIALOGS")) {
        QMessageBox ask(QMessageBox::Warning, tr("Trust Signer"),
                        tr("Trust this key as \"%1\"'s from now on?").arg(QString::fromStdString(r.reviewer)),
                        QMessageBox::Cancel, this);
        ask.setTextFormat(Qt::PlainText);
        ask.setInformativeText(
            tr("Anyone can make a key and type a reviewer's name. Compare the whole key below with the one "
               "%1 gives you in person or over a channel you trust before you add it.\n\n"
               "Public key:\n%2\nFingerprint: %3\n\nIt is added to %4.")
                .arg(QString::fromStdString(r.reviewer), QString::fromStdString(r.publicKey),
                     QString::fromStdString(r.keyFingerprint), QString::fromStdString(file)));
        QPushButton* yes = ask.addButton(tr("Trust This Key"), QMessageBox::AcceptRole);
        ask.setDefaultButton(QMessageBox::Cancel);
        ask.exec();
        if (ask.clickedButton() != yes)
            return {};
    }
    try {
        addTrustedKey(file, r.reviewer, r.publicKey);
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    refresh();
    return {};
}

void SignoffPanel::showSelected() {
    const QModelIndex i = table_->currentIndex();
    trust_->setEnabled(i.isValid() && size_t(i.row()) < model_->entries().size() &&
                       signoffState(model_->entries()[size_t(i.row())]) == SignoffState::Untrusted);
    if (!i.isValid() || size_t(i.row()) >= model_->entries().size()) {
        detail_->setText(model_->entries().empty() ? tr("No sign-off records beside this contract. Sign Off… writes one.") : QString());
        return;
    }
    const SignoffEntry& e = model_->entries()[size_t(i.row())];
    detail_->setText(e.path + QLatin1Char('\n') + signoffDetailText(e));
}

void SignoffPanel::markUnsavedEdits() {
    const bool edited = !session_->thresholdEdits().empty();
    for (SignoffEntry e : model_->entries())
        if (e.editedSinceSigned != edited) {
            e.editedSinceSigned = edited;
            model_->updateEntry(e);
        }
    updateSummary();
}

void SignoffPanel::updateSummary() {
    int verified = 0, stale = 0, untrusted = 0, bad = 0;
    for (const auto& e : model_->entries())
        switch (signoffState(e)) {
        case SignoffState::Verified: ++verified; break;
        case SignoffState::Stale: ++stale; break;
        case SignoffState::Untrusted: ++untrusted; break;
        case SignoffState::Invalid:
        case SignoffState::Unreadable: ++bad; break;
        case SignoffState::Checking: break;
        }
    const int n = int(model_->entries().size());
    QString counts = tr("%1 verified, %2 stale, %3 invalid or unreadable").arg(verified).arg(stale).arg(bad);
    if (untrusted > 0)
        counts += tr(", %1 by an untrusted signer").arg(untrusted);
    summary_->setText(n == 0 ? tr("No records") : n == 1 ? tr("1 record: %1").arg(counts) : tr("%1 records: %2").arg(n).arg(counts));
}

}  // namespace kcx::ui
