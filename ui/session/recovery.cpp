#include "ui/session/recovery.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>
#include <QThreadPool>

#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/base/json_depth.h"
#include "core/base/printable.h"
#include "core/base/safe_open.h"
#include "core/base/sha256.h"

namespace kcx::ui {

namespace {
QThreadPool* writer() {
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool;
        p->setMaxThreadCount(1);   // writes land in call order
        return p;
    }();
    return pool;
}

QString keyFor(const QString& contractPath) {
    const QString abs = contractPath.isEmpty() ? QStringLiteral("(no file)") : QFileInfo(contractPath).absoluteFilePath();
    return QString::fromLatin1(QCryptographicHash::hash(abs.toUtf8(), QCryptographicHash::Sha256).toHex().left(24));
}
}  // namespace

QString recoveryDir() {
    const QString env = qEnvironmentVariable("KCX_RECOVERY_DIR");
    if (!env.isEmpty())
        return env;
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/recovery");
}

QString recoveryFile(const QString& contractPath) {
    return recoveryDir() + QLatin1Char('/') + keyFor(contractPath) + QStringLiteral(".json");
}

void updateRecovery(const Session& session) {
    const QString file = recoveryFile(session.contractPath());
    const auto edits = session.thresholdEdits();
    if (!session.contract() || edits.empty()) {
        writer()->start([file] { QFile::remove(file); });
        return;
    }
    nlohmann::json j;
    j["kcx_recovery"] = 1;
    j["contract"] = session.contractPath().toStdString();
    j["base_sha256"] = sha256Hex(session.contractText());
    j["time"] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    j["edits"] = nlohmann::json::array();
    for (const auto& e : edits)
        j["edits"].push_back({{"clause", e.clause}, {"which", e.which}, {"value", e.value}});
    const std::string text = j.dump(2) + "\n";
    writer()->start([file, text] {
        QDir().mkpath(QFileInfo(file).absolutePath());
        QSaveFile out(file);
        if (!out.open(QIODevice::WriteOnly) || out.write(text.data(), qint64(text.size())) != qint64(text.size()) ||
            !out.commit())
            std::fprintf(stderr, "kcx: cannot write the recovery file %s\n", qPrintable(file));
    });
}

void waitForRecovery() { writer()->waitForDone(); }

void removeRecovery(const QString& contractPath) {
    const QString file = recoveryFile(contractPath);
    writer()->start([file] { QFile::remove(file); });
}

std::optional<RecoveryState> readRecovery(const QString& contractPath) {
    waitForRecovery();
    const QString file = recoveryFile(contractPath);
    if (!QFileInfo::exists(file))
        return std::nullopt;
    try {
        // Read like every other JSON from disk (issue 16): a regular file only (a FIFO put
        // there would hang the window), at most 16 MiB (a recovery file holds a few edits),
        // nesting checked before the text becomes a tree.
        const std::string text = readRegularFile(file.toStdString(), 16u << 20, "recovery file");
        if (const size_t at = jsonDepthExceeded(text); at != std::string::npos)
            throw std::runtime_error(jsonDepthMessage() + " at byte " + std::to_string(at));
        const auto j = nlohmann::json::parse(text);
        RecoveryState r;
        r.contract = QString::fromStdString(j.at("contract").get<std::string>());
        r.baseSha256 = j.at("base_sha256").get<std::string>();
        r.time = QString::fromStdString(j.value("time", std::string()));
        for (const auto& e : j.at("edits"))
            r.edits.push_back({e.at("clause").get<std::string>(), e.at("which").get<std::string>(), e.at("value").get<double>()});
        return r;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s: damaged recovery file removed (%s)\n", printable(file.toStdString()).c_str(),
                     printable(e.what()).c_str());
        QFile::remove(file);
        return std::nullopt;
    }
}

}  // namespace kcx::ui
