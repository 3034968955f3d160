// The reviewer's sign-off: who, approve or reject, a comment, the stage, the private key
// and where the record goes. It only collects and checks; SignoffPanel signs in the
// background. The reviewer's name and key path are remembered for next time.
#pragma once

#include <QDialog>

#include "core/signoff/signoff_files.h"

class QButtonGroup;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QRadioButton;

namespace kcx::ui {

class SignoffDialog : public QDialog {
    Q_OBJECT
public:
    SignoffDialog(const QString& contractPath, const QString& runPath, const QStringList& stages,
                  const QString& verdictText, QWidget* parent = nullptr);

    SignoffRequest request() const;
    QString keyPath() const;
    QString outPath() const;

    // For tests and scripted use.
    QLineEdit* reviewerEdit() const { return reviewer_; }
    QRadioButton* approveButton() const { return approve_; }
    QRadioButton* rejectButton() const { return reject_; }
    QPlainTextEdit* commentEdit() const { return comment_; }
    QComboBox* stageBox() const { return stage_; }
    QLineEdit* keyEdit() const { return key_; }
    QLineEdit* outEdit() const { return out_; }
    QCheckBox* confirmFailingBox() const { return confirmFailing_; }
    // The evaluation being signed fails (or its action blocks promotion or rolls back): an
    // approval then needs a comment that says why and an explicit confirmation.
    void setFailing(bool failing);
    // Why the dialog cannot be accepted now; empty when it can.
    QString problem() const;

    void accept() override;

private:
    void browseKey();
    void newKey();
    void browseOut();
    void updateState();

    QString contractPath_, runPath_;
    QLineEdit* reviewer_;
    QRadioButton* approve_;
    QRadioButton* reject_;
    QButtonGroup* decision_;
    QPlainTextEdit* comment_;
    QComboBox* stage_;
    QLineEdit* key_;
    QLineEdit* out_;
    QLabel* problem_;
    QCheckBox* confirmFailing_;
    bool failing_ = false;
    QPushButton* sign_ = nullptr;
};

}  // namespace kcx::ui
