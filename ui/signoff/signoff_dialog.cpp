#include "ui/signoff/signoff_dialog.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QVBoxLayout>

#include "ui/session/background.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

namespace {
QWidget* withButtons(QWidget* field, std::initializer_list<QPushButton*> buttons) {
    auto* w = new QWidget;
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(field, 1);
    for (auto* b : buttons)
        h->addWidget(b);
    return w;
}
}  // namespace

SignoffDialog::SignoffDialog(const QString& contractPath, const QString& runPath, const QStringList& stages,
                             const QString& verdictText, QWidget* parent)
    : QDialog(parent), contractPath_(contractPath), runPath_(runPath) {
    setWindowTitle(tr("Sign Off"));
    const QSettings settings;
    auto* intro = new QLabel(tr("Your signature binds the contract file <b>%1</b>, the run file <b>%2</b> and the "
                                "results of evaluating them now (%3). Any later change to either file or to this "
                                "record shows up when the record is verified.")
                                 .arg(QFileInfo(contractPath).fileName().toHtmlEscaped(),
                                      QFileInfo(runPath).fileName().toHtmlEscaped(), verdictText.toHtmlEscaped()));
    intro->setWordWrap(true);
    intro->setToolTip(plainToolTip(contractPath + QLatin1Char('\n') + runPath));

    reviewer_ = new QLineEdit(settings.value(QStringLiteral("signoff/reviewer"), qEnvironmentVariable("USER")).toString());
    reviewer_->setAccessibleName(tr("reviewer"));
    approve_ = new QRadioButton(tr("&Approve"));
    reject_ = new QRadioButton(tr("&Reject"));
    decision_ = new QButtonGroup(this);   // no default: the reviewer chooses
    decision_->addButton(approve_);
    decision_->addButton(reject_);
    auto* decisionRow = new QWidget;
    auto* dh = new QHBoxLayout(decisionRow);
    dh->setContentsMargins(0, 0, 0, 0);
    dh->addWidget(approve_);
    dh->addWidget(reject_);
    dh->addStretch();
    comment_ = new QPlainTextEdit;
    comment_->setPlaceholderText(tr("What you checked, what you accept and why (signed with the record)"));
    comment_->setTabChangesFocus(true);
    stage_ = new QComboBox;
    stage_->addItems(stages);
    stage_->setToolTip(tr("The stage whose action the record states"));
    key_ = new QLineEdit(settings.value(QStringLiteral("signoff/key")).toString());
    key_->setPlaceholderText(tr("private key file (kcx keygen)"));
    auto* browseKey = new QPushButton(tr("Browse…"));
    auto* newKey = new QPushButton(tr("New Key…"));
    out_ = new QLineEdit(QString::fromStdString(newSignoffPath(contractPath.toStdString(), reviewer_->text().toStdString())));
    auto* browseOut = new QPushButton(tr("Browse…"));
    confirmFailing_ = new QCheckBox(tr("I approve although the contract fails here; my comment says why"));
    confirmFailing_->setVisible(false);
    problem_ = new QLabel;
    problem_->setTextFormat(Qt::PlainText);
    problem_->setWordWrap(true);
    problem_->setStyleSheet(QStringLiteral("color: #b00020"));

    auto* form = new QFormLayout;
    form->addRow(tr("Re&viewer:"), reviewer_);
    form->addRow(tr("Decision:"), decisionRow);
    form->addRow(tr("&Comment:"), comment_);
    form->addRow(QString(), confirmFailing_);
    form->addRow(tr("S&tage:"), stage_);
    form->addRow(tr("&Key:"), withButtons(key_, {browseKey, newKey}));
    form->addRow(tr("&Record:"), withButtons(out_, {browseOut}));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    sign_ = buttons->addButton(tr("&Sign"), QDialogButtonBox::AcceptRole);
    connect(buttons, &QDialogButtonBox::accepted, this, &SignoffDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &SignoffDialog::reject);
    connect(browseKey, &QPushButton::clicked, this, &SignoffDialog::browseKey);
    connect(newKey, &QPushButton::clicked, this, &SignoffDialog::newKey);
    connect(browseOut, &QPushButton::clicked, this, &SignoffDialog::browseOut);
    connect(reviewer_, &QLineEdit::textChanged, this, &SignoffDialog::updateState);
    connect(key_, &QLineEdit::textChanged, this, &SignoffDialog::updateState);
    connect(out_, &QLineEdit::textChanged, this, &SignoffDialog::updateState);
    connect(decision_, &QButtonGroup::buttonToggled, this, &SignoffDialog::updateState);
    connect(comment_, &QPlainTextEdit::textChanged, this, &SignoffDialog::updateState);
    connect(confirmFailing_, &QCheckBox::toggled, this, &SignoffDialog::updateState);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(problem_);
    layout->addWidget(buttons);
    resize(560, 420);
    updateState();
}

SignoffRequest SignoffDialog::request() const {
    SignoffRequest r;
    r.contractPath = contractPath_.toStdString();
    r.runPath = runPath_.toStdString();
    r.reviewer = reviewer_->text().trimmed().toStdString();
    r.decision = approve_->isChecked() ? "approve" : reject_->isChecked() ? "reject" : "";
    r.comment = comment_->toPlainText().toStdString();
    r.stage = stage_->currentText().toStdString();
    return r;
}

QString SignoffDialog::keyPath() const { return key_->text().trimmed(); }
QString SignoffDialog::outPath() const { return out_->text().trimmed(); }

void SignoffDialog::setFailing(bool failing) {
    failing_ = failing;
    updateState();
}

QString SignoffDialog::problem() const {
    if (reviewer_->text().trimmed().isEmpty())
        return tr("Enter the reviewer's name.");
    if (!approve_->isChecked() && !reject_->isChecked())
        return tr("Choose approve or reject.");
    if (failing_ && approve_->isChecked()) {
        if (comment_->toPlainText().trimmed().isEmpty())
            return tr("The contract fails: to approve anyway, say in the comment why the failure is acceptable.");
        if (!confirmFailing_->isChecked())
            return tr("The contract fails: confirm that you approve it anyway.");
    }
    if (keyPath().isEmpty())
        return tr("Choose your private key, or make one with New Key….");
    if (!QFileInfo(keyPath()).isFile())
        return tr("%1: no such key file.").arg(keyPath());
    if (outPath().isEmpty())
        return tr("Choose where the record goes.");
    if (QFileInfo(outPath()).absoluteFilePath() == QFileInfo(contractPath_).absoluteFilePath() ||
        QFileInfo(outPath()).absoluteFilePath() == QFileInfo(runPath_).absoluteFilePath())
        return tr("The record must not replace the contract or the run.");
    return {};
}

void SignoffDialog::updateState() {
    confirmFailing_->setVisible(failing_ && approve_->isChecked());
    const QString p = problem();
    problem_->setText(p);
    if (sign_)
        sign_->setEnabled(p.isEmpty());
}

void SignoffDialog::accept() {
    if (!problem().isEmpty())
        return;
    try {
        readSecretKey(keyPath().toStdString());   // a clear message now rather than after evaluating
    } catch (const std::exception& e) {
        problem_->setText(QString::fromStdString(e.what()));
        return;
    }
    if (QFileInfo::exists(outPath()) && !qEnvironmentVariableIsSet("KCX_NO_DIALOGS") &&
        QMessageBox::question(this, tr("Replace Record?"), tr("%1 exists. Replace it with the new record?").arg(outPath())) !=
            QMessageBox::Yes)
        return;
    storeSetting(QStringLiteral("signoff/reviewer"), reviewer_->text().trimmed());
    storeSetting(QStringLiteral("signoff/key"), QFileInfo(keyPath()).absoluteFilePath());
    QDialog::accept();
}

void SignoffDialog::browseKey() {
    const QString f = QFileDialog::getOpenFileName(this, tr("Private Key"), QFileInfo(keyPath()).absolutePath());
    if (!f.isEmpty())
        key_->setText(f);
}

void SignoffDialog::newKey() {
    const QString f = QFileDialog::getSaveFileName(this, tr("New Private Key"), QDir::home().filePath(QStringLiteral(".kcx-key")));
    if (f.isEmpty())
        return;
    try {
        const std::string pub = generateKeyPair(f.toStdString());
        key_->setText(f);
        QMessageBox::information(this, tr("New Key"),
                                 tr("Wrote the private key %1 (mode 0600; keep it secret) and the public key %1.pub "
                                    "(fingerprint %2). Give the .pub file to whoever verifies your records.")
                                     .arg(f, QString::fromStdString(keyFingerprint(pub))));
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("New Key"), QString::fromStdString(e.what()));
    }
}

void SignoffDialog::browseOut() {
    const QString f = QFileDialog::getSaveFileName(this, tr("Sign-off Record"), outPath(), tr("Sign-off records (*.signoff.json)"));
    if (!f.isEmpty())
        out_->setText(f);
}

}  // namespace kcx::ui
