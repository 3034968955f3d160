// Sign-off records (core/signoff/signoff.h, docs/signoff.md): canonical JSON, keys, signing, and
// that every bound field, the key and the signature are checked.
#include <QtTest/QTest>
#include <QTemporaryDir>
#include <QDir>
#include <QFile>

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>

#include "core/base/sha256.h"
#include "core/demo/demo.h"
#include "core/evaluate/evaluation_json.h"
#include "core/formats/loader.h"
#include "core/signoff/signoff.h"
#include "core/signoff/signoff_files.h"
#include "core/signoff/trusted_keys.h"

using namespace kcx;
using nlohmann::json;

Q_DECLARE_METATYPE(std::function<void(SignoffRecord&)>)

namespace {

Evaluation smallEvaluation() {
    Evaluation ev;
    Result r;
    r.clause = "N1";
    r.metric = "abs_log_ratio";
    r.aggregate = "max";
    r.status = Status::Fail;
    r.observed = 0.6931471805599453;
    r.max = 0.5;
    r.n = 8;
    r.action = Action::BlockPromotion;
    r.message = "observed 0.693 > 0.5";
    ev.results.push_back(r);
    ev.verdict = Status::Fail;
    ev.stage = "offline_ci";
    ev.action = Action::BlockPromotion;
    ev.stageActions["offline_ci"] = Action::BlockPromotion;
    return ev;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

class TestSignoff : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string key_, otherKey_, trusted_;

    std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }

    SignoffRecord signedRecord() const {
        SignoffRecord r;
        r.contractSha256 = std::string(64, 'a');
        r.runSha256 = std::string(64, 'b');
        r.resultsSha256 = resultsSha256(smallEvaluation());
        r.verdict = "fail";
        r.stage = "offline_ci";
        r.action = "block_promotion";
        r.reviewer = "Ada Lovelace";
        r.decision = "approve";
        r.comment = "known fp8 drift; \"accepted\"\n";
        r.time = "2026-12-03T08:43:08Z";
        r.kcxVersion = KCX_VERSION;
        signRecord(r, readSecretKey(key_));
        return r;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        key_ = path("key");
        otherKey_ = path("other");
        generateKeyPair(key_);
        generateKeyPair(otherKey_);
        // verifySignoffFiles trusts the signers of KCX_TRUSTED_KEYS (SPEC 6.4): Ada's key only.
        trusted_ = path("trusted_keys");
        spit(trusted_, "# test signers\nAda\t" + readPublicKey(key_ + ".pub") + "\n");
        qputenv("KCX_TRUSTED_KEYS", QByteArray::fromStdString(trusted_));
    }

    void canonical_data() {
        QTest::addColumn<QString>("input");   // JSON text
        QTest::addColumn<QString>("want");
        QTest::newRow("key order") << R"({"b": 1, "a": {"z": null, "B": true, "y": false}})"
                                   << R"({"a":{"B":true,"y":false,"z":null},"b":1})";
        QTest::newRow("utf-8 keys by bytes") << "{\"\xc3\xa9\": 1, \"z\": 2}" << "{\"z\":2,\"\xc3\xa9\":1}";
        QTest::newRow("array order kept") << R"([3, 1, 2])" << "[3,1,2]";
        // (not a raw string: moc mis-reads \" inside one)
        QTest::newRow("escapes") << "[\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\\u00e9\\u2028\"]"
                                 << "[\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\x7f\xc3\xa9\xe2\x80\xa8\"]";
        QTest::newRow("0.1") << "0.1" << "0.1";
        QTest::newRow("1e-7") << "1e-7" << "1e-07";
        QTest::newRow("3.0 is 3") << "3.0" << "3";
        QTest::newRow("3") << "3" << "3";
        QTest::newRow("-0.0 is 0") << "-0.0" << "0";
        QTest::newRow("-2.5") << "-2.5" << "-2.5";
        QTest::newRow("2/3") << "0.66666666666666663" << "0.6666666666666666";
        QTest::newRow("123456.789") << "123456.789" << "123456.789";
        QTest::newRow("1e21") << "1e21" << "1e+21";
        QTest::newRow("1e300") << "1E300" << "1e+300";
        QTest::newRow("denormal") << "5e-324" << "5e-324";
        QTest::newRow("2^53+1 int") << "9007199254740993" << "9007199254740993";
        QTest::newRow("uint64 max") << "18446744073709551615" << "18446744073709551615";
        QTest::newRow("int64 min") << "-9223372036854775808" << "-9223372036854775808";
    }
    void canonical() {
        QFETCH(QString, input);
        QFETCH(QString, want);
        const json j = json::parse(input.toStdString());
        const std::string got = canonicalJson(j);
        QCOMPARE(QString::fromStdString(got), want);
        // Stable under a round trip through text, and numbers read back exactly.
        const json back = json::parse(got);
        QCOMPARE(canonicalJson(back), got);
        if (j.is_number_float() && j.get<double>() != 0)
            QCOMPARE(back.get<double>(), j.get<double>());
    }

    void canonicalNonFinite() {
        QCOMPARE(canonicalJson(json::array({std::nan(""), HUGE_VAL})), std::string("[null,null]"));
        QCOMPARE(canonicalJson(json(-0.0)), std::string("0"));
        QCOMPARE(canonicalJson(json(1e-7)), std::string("1e-07"));
    }

    void resultsHashIgnoresProseOnly() {
        const Evaluation ev = smallEvaluation();
        const std::string h = resultsSha256(ev);
        QCOMPARE(h.size(), size_t(64));
        Evaluation reworded = ev;
        reworded.results[0].message = "a different wording";
        QCOMPARE(resultsSha256(reworded), h);
        Evaluation changed = ev;
        changed.results[0].observed = 0.6931471805599454;   // one ulp
        QVERIFY(resultsSha256(changed) != h);
        changed = ev;
        changed.stage = "full";
        QVERIFY(resultsSha256(changed) != h);
        QVERIFY(!signedResultsJson(ev)["results"][0].contains("message"));
    }

    // Numerical results gained "ci", "confidence" and "beyond" (the quantile's interval, for
    // the reviewer) after records had been signed: the results hash leaves them out, so an
    // old record still verifies. The canonical text and hash are pinned as KCX wrote them
    // before; a statistical result's interval stays bound.
    void resultsHashWithoutQuantileInterval() {
        const std::string before =
            R"({"action":"block_promotion","bounds":[],"kcx":1,"results":[{"action":"block_promotion","aggregate":"max",)"
            R"("clause":"N1","family":"numerical","margin":null,"max":0.5,"metric":"abs_log_ratio","n":8,)"
            R"("observed":0.6931471805599453,"severity":"error","slice":null,"status":"fail"}],"stage":"offline_ci",)"
            R"("stages":{"offline_ci":"block_promotion"},"verdict":"fail"})";
        const std::string pinned = "3f8adc335fc1d54f803d2e9b38a0aa2c5b5f02bc37b5c1e58073e12b46de6319";
        QCOMPARE(sha256Hex(before), pinned);
        Evaluation ev = smallEvaluation();
        QCOMPARE(canonicalJson(signedResultsJson(ev)), before);
        ev.results[0].ci = std::pair{0.6931471805599453, HUGE_VAL};
        ev.results[0].confidence = 0.95;
        ev.results[0].beyond = 3;
        QVERIFY(evaluationJson(ev)["results"][0].contains("ci"));   // written by check --json
        QVERIFY(evaluationJson(ev)["results"][0].contains("beyond"));
        QCOMPARE(canonicalJson(signedResultsJson(ev)), before);
        QCOMPARE(resultsSha256(ev), pinned);
        // A mean test's interval decides its status: it is bound, as before.
        Evaluation mean = smallEvaluation();
        mean.results[0].family = Family::Statistical;
        mean.results[0].aggregate = "mean";
        mean.results[0].ci = std::pair{0.1, 0.2};
        mean.results[0].confidence = 0.95;
        const std::string h = resultsSha256(mean);
        QVERIFY(signedResultsJson(mean)["results"][0].contains("ci"));
        QVERIFY(signedResultsJson(mean)["results"][0].contains("confidence"));
        mean.results[0].ci = std::pair{0.1, 0.3};
        QVERIFY(resultsSha256(mean) != h);
    }

    void keyFiles() {
        struct stat st;
        QCOMPARE(::stat(key_.c_str(), &st), 0);
        QCOMPARE(int(st.st_mode & 0777), 0600);
        const SecretKey k = readSecretKey(key_);
        QCOMPARE(readPublicKey(key_ + ".pub"), k.publicKeyHex);
        QCOMPARE(keyFingerprint(k.publicKeyHex).size(), size_t(16));
        QVERIFY(readPublicKey(otherKey_ + ".pub") != k.publicKeyHex);
        // Never replaced; the wrong kind of file is named.
        QVERIFY_THROWS_EXCEPTION(SignoffError, generateKeyPair(key_));
        QVERIFY_THROWS_EXCEPTION(SignoffError, readPublicKey(key_));
        QVERIFY_THROWS_EXCEPTION(SignoffError, readSecretKey(key_ + ".pub"));
        // A private key others can read is refused.
        const std::string open = path("open");
        spit(open, slurp(key_));
        ::chmod(open.c_str(), 0644);
        try {
            readSecretKey(open);
            QFAIL("a mode 0644 private key was accepted");
        } catch (const SignoffError& e) {
            QVERIFY2(std::string(e.what()).find("0644") != std::string::npos, e.what());
        }
    }

    void roundTrip() {
        const SignoffRecord r = signedRecord();
        QVERIFY(signatureValid(r));
        QCOMPARE(r.publicKey, readPublicKey(key_ + ".pub"));
        QCOMPARE(r.keyFingerprint, keyFingerprint(r.publicKey));
        const std::string file = path("r.json");
        writeSignoff(r, file);
        const SignoffRecord back = readSignoff(file);
        QVERIFY(signatureValid(back));
        QCOMPARE(signedBytes(back), signedBytes(r));
        QCOMPARE(canonicalJson(signoffJson(back)), canonicalJson(signoffJson(r)));
        QVERIFY(signedBytes(r).rfind("kcx-signoff-v1\n{\"action\":", 0) == 0);
        QVERIFY(signedBytes(r).find("signature") == std::string::npos);
    }

    // Issue 16, case 5: records and keys are read into a tree too. JSON nested past the
    // limit is refused before parsing, naming the file and the byte of the bracket.
    void deepJsonRecordsAndKeys() {
        // 200,000 levels: deep enough to overflow a recursive parser's stack, and under the
        // 1 MiB cap on key files, so that the depth check (not the size cap) refuses it.
        const std::string deep = "{\"reviewer\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
        const std::string record = path("deep.signoff.json"), pub = path("deep.pub");
        spit(record, deep);
        spit(pub, deep);
        for (const auto& [file, read] : {std::pair<std::string, std::function<void()>>{record, [&] { readSignoff(record); }},
                                         {pub, [&] { readPublicKey(pub); }}}) {
            try {
                read();
                QFAIL("deep JSON was read");
            } catch (const SignoffError& e) {
                const std::string what = e.what();
                // '{' opens level 1, so the 64th '[' (at byte 13 + 63) opens level 65.
                QVERIFY2(what.rfind(file + ": byte 76: ", 0) == 0, what.c_str());
                QVERIFY2(what.find("JSON nested deeper than 64 levels") != std::string::npos, what.c_str());
            }
        }
    }

    // A key written twice would let nlohmann keep the last one silently: refused at the second.
    void duplicateKeysInRecordsAndKeys() {
        const SignoffRecord r = signedRecord();
        const std::string file = path("dup.signoff.json");
        writeSignoff(r, file);
        std::ifstream in(file, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), {});
        const size_t brace = text.rfind('}');
        text.insert(brace, ",\n  \"verdict\": \"pass\"\n");
        spit(file, text);
        try {
            readSignoff(file);
            QFAIL("a record with two verdicts was read");
        } catch (const SignoffError& e) {
            const std::string want = file + ": byte " + std::to_string(text.rfind("\"verdict\"")) +
                                     ": duplicate key \"verdict\"";
            QVERIFY2(std::string(e.what()).rfind(want, 0) == 0, e.what());
        }
        const std::string pub = path("dup.pub");
        spit(pub, "{\"type\": \"ed25519-public\", \"public_key\": \"" + r.publicKey + "\", \"public_key\": \"" +
                      std::string(64, 'a') + "\"}");
        try {
            readPublicKey(pub);
            QFAIL("a key file with two keys was read");
        } catch (const SignoffError& e) {
            QVERIFY2(std::string(e.what()).find(pub + ": byte ") == 0, e.what());
            QVERIFY2(std::string(e.what()).find("duplicate key \"public_key\"") != std::string::npos, e.what());
        }
    }

    // Sign against real files and check against them: the window and `kcx verify` use this.
    // Each change names exactly what it touched.
    void filesSignAndVerify() {
        const std::string dir = path("files");
        const std::string runPath = writeDemo(dir);
        const std::string contractPath = dir + "/demo.yaml";
        QFile demoContract(QStringLiteral(KCX_SOURCE_DIR "/resources/contracts/demo.yaml"));
        QVERIFY(demoContract.open(QIODevice::ReadOnly));
        const std::string contractText = demoContract.readAll().toStdString();
        spit(contractPath, contractText);
        auto run = std::make_shared<const Run>(loadRun(runPath));

        SignoffRequest req{contractPath, runPath, "Ada", "approve", "ok", ""};
        const SignoffRecord r = signFiles(req, run, readSecretKey(key_));
        QVERIFY(signatureValid(r));
        QCOMPARE(r.stage, std::string("offline_ci"));       // the contract's first stage
        QCOMPARE(r.verdict, std::string("fail"));            // docs/demo.md
        QCOMPARE(r.contractSha256, sha256Hex(contractText));
        auto v = verifySignoffFiles(r, contractPath, runPath, run);
        QVERIFY2(v.verified(), v.differingText().c_str());
        QCOMPARE(v.checks.size(), size_t(6));   // record, key, contract, run, results, verdict
        QCOMPARE(v.checks[1].what, std::string("key"));
        QVERIFY(v.checks[1].ok);
        QCOMPARE(v.checks[5].what, std::string("verdict"));
        QVERIFY(v.checks[5].ok);

        // Issue 16: a record whose signer states a verdict and action the evaluation does
        // not give (pass over the demo's failure), validly signed, with every file and the
        // results' hash unchanged, does not verify: the verdict check names it.
        SignoffRecord lying = r;
        lying.verdict = "pass";
        lying.action = "pass";
        signRecord(lying, readSecretKey(key_));
        QVERIFY(signatureValid(lying));
        const auto lie = verifySignoffFiles(lying, contractPath, runPath, run);
        QVERIFY(!lie.verified());
        QCOMPARE(lie.differingText(), std::string("verdict"));
        QVERIFY(lie.checks[5].text.find("evaluating gives fail, block_promotion") != std::string::npos);

        // A threshold edited in the contract: the file and the results both differ.
        std::string edited = contractText;
        const auto at = edited.find("max: ");
        QVERIFY(at != std::string::npos);
        edited.insert(at + 5, "1");   // "max: 0.3" -> "max: 10.3"
        spit(contractPath, edited);
        v = verifySignoffFiles(r, contractPath, runPath, run);
        QCOMPARE(v.differingText(), std::string("contract, results"));
        // A comment only: the file differs, the results do not.
        spit(contractPath, contractText + "# reviewed\n");
        v = verifySignoffFiles(r, contractPath, runPath, run);
        QCOMPARE(v.differingText(), std::string("contract"));
        spit(contractPath, contractText);
        // One more byte in the run file.
        spit(runPath, slurp(runPath) + "\n");
        v = verifySignoffFiles(r, contractPath, runPath, std::make_shared<const Run>(loadRun(runPath)));
        QCOMPARE(v.differingText(), std::string("run"));
        // A record naming a stage the contract lacks (its signature broken by the edit):
        // the results cannot be evaluated there, and say why.
        SignoffRecord other = r;
        other.stage = "nowhere";
        v = verifySignoffFiles(other, contractPath, runPath, run);
        QCOMPARE(v.differingText(), std::string("record, run, results"));
        QVERIFY(v.checks.back().text.find("nowhere") != std::string::npos);
    }

    // SPEC 6.4 v1.1: a key counts only when listed under the record's reviewer. Listed:
    // verified; the reviewer listed with another key: the key differs; not listed, or no
    // list at all: not checked, so never verified; --pub decides alone when given.
    void trustedSigners() {
        SignoffRecord r = signedRecord();   // signed with key_ by "Ada Lovelace"
        const std::string ada = readPublicKey(key_ + ".pub"), other = readPublicKey(otherKey_ + ".pub");
        auto keyCheck = [](const SignoffVerification& v) {
            for (const auto& c : v.checks)
                if (c.what == "key")
                    return c;
            return SignoffCheck{};
        };
        SignoffNow now;
        now.trust.keys = std::vector<TrustedKey>{{"Bob", other, 1}, {"Ada Lovelace", ada, 2}};
        now.trust.name = "trusted_keys";
        SignoffVerification v = verifySignoff(r, now);
        QVERIFY(v.verified());
        QVERIFY(keyCheck(v).text.find("trusted for \"Ada Lovelace\" (trusted_keys)") != std::string::npos);

        now.trust.keys = std::vector<TrustedKey>{{"Ada Lovelace", other, 1}};
        v = verifySignoff(r, now);
        QVERIFY(!v.verified() && v.untrustedSigner());
        QCOMPARE(v.differingText(), std::string("key"));
        QVERIFY2(keyCheck(v).text.find("is not the trusted key of \"Ada Lovelace\" (trusted_keys lists " +
                                       keyFingerprint(other) + ")") != std::string::npos,
                 keyCheck(v).text.c_str());

        now.trust.keys = std::vector<TrustedKey>{{"Bob", ada, 1}};   // Ada's key, but under Bob
        v = verifySignoff(r, now);
        QVERIFY(!v.verified() && v.untrustedSigner());
        QVERIFY(v.differing().empty());
        QCOMPARE(v.unchecked(), std::vector<std::string>{"key"});
        QVERIFY(keyCheck(v).unchecked);

        v = verifySignoff(r, SignoffNow{});   // no list at all
        QVERIFY(!v.verified() && v.untrustedSigner() && v.differing().empty());

        now.publicKeyHex = ada;   // --pub decides, whatever the list says
        now.publicKeyName = "ada.pub";
        QVERIFY(verifySignoff(r, now).verified());
        now.publicKeyHex = other;
        QCOMPARE(verifySignoff(r, now).differingText(), std::string("key"));
    }

    // The trusted-keys file: comments and blank lines ignored, every bad line named by file
    // and line; keyTrust by name and key; addTrustedKey keeps what is there.
    void trustedKeysFile() {
        const std::string ada = readPublicKey(key_ + ".pub"), other = readPublicKey(otherKey_ + ".pub");
        const std::string f = path("keys.txt");
        spit(f, "# who\n\n  Ada Lovelace\t" + ada + "  # since 2026\nBob\t" + other + "\r\n");
        const auto keys = readTrustedKeys(f);
        QCOMPARE(keys.size(), size_t(2));
        QCOMPARE(keys[0].reviewer, std::string("Ada Lovelace"));
        QCOMPARE(keys[0].publicKeyHex, ada);
        QCOMPARE(keys[0].line, 3);
        QCOMPARE(keys[1].publicKeyHex, other);
        QVERIFY(keyTrust(keys, "Ada Lovelace", ada) == KeyTrust::Trusted);
        QVERIFY(keyTrust(keys, "Ada Lovelace", other) == KeyTrust::OtherKey);
        QVERIFY(keyTrust(keys, "Ada", ada) == KeyTrust::Unknown);   // names match whole

        auto errorOf = [&](const std::string& text) {
            spit(f, text);
            try {
                readTrustedKeys(f);
            } catch (const SignoffError& e) {
                return std::string(e.what());
            }
            return std::string("(no error)");
        };
        QCOMPARE(errorOf("# ok\nAda " + ada + "\n"),
                 f + ":2: expected the reviewer's name, a tab, and the 64-hex-digit public key");
        QCOMPARE(errorOf("\t" + ada + "\n"), f + ":1: the reviewer's name is empty");
        std::string upper = ada;
        upper[0] = 'A';
        upper[1] = 'B';
        QCOMPARE(errorOf("Ada\t" + upper + "\n"),
                 f + ":1: the public key must be 64 lower-case hex digits (the public_key of a KEY.pub)");
        QCOMPARE(errorOf("Ada\t" + ada + "00\n"),
                 f + ":1: the public key must be 64 lower-case hex digits (the public_key of a KEY.pub)");
        QVERIFY_THROWS_EXCEPTION(SignoffError, readTrustedKeys(path("no-such-file")));
        QVERIFY_THROWS_EXCEPTION(SignoffError, readTrustedKeys(path("")));   // a folder

        const std::string added = path("cfg/kcx/trusted_keys");
        addTrustedKey(added, "Ada", ada);
        addTrustedKey(added, "Bob", other);
        const auto back = readTrustedKeys(added);
        QCOMPARE(back.size(), size_t(2));
        QVERIFY(keyTrust(back, "Ada", ada) == KeyTrust::Trusted && keyTrust(back, "Bob", other) == KeyTrust::Trusted);
        QVERIFY_THROWS_EXCEPTION(SignoffError, addTrustedKey(added, "Eve\tMallory", ada));
        QVERIFY_THROWS_EXCEPTION(SignoffError, addTrustedKey(added, "Eve\nBob", ada));
        QVERIFY_THROWS_EXCEPTION(SignoffError, addTrustedKey(added, "Eve", "abc"));
        QCOMPARE(readTrustedKeys(added).size(), size_t(2));   // nothing half-added

        // loadTrust: a named file must exist; the default one may be missing.
        QVERIFY_THROWS_EXCEPTION(SignoffError, loadTrust(path("missing")));
        QVERIFY(loadTrust(added).keys->size() == 2);
        const QByteArray env = qgetenv("KCX_TRUSTED_KEYS"), home = qgetenv("HOME");
        qunsetenv("KCX_TRUSTED_KEYS");
        qputenv("HOME", QByteArray::fromStdString(path("nohome")));
        TrustSource none = loadTrust();
        QVERIFY(!none.keys);
        QVERIFY2(none.note.find(path("nohome") + "/.config/kcx/trusted_keys does not exist") != std::string::npos,
                 none.note.c_str());
        qputenv("HOME", QByteArray::fromStdString(path("cfg/..")));
        QCOMPARE(defaultTrustedKeysPath(), path("cfg/..") + "/.config/kcx/trusted_keys");
        qputenv("HOME", home);
        qputenv("KCX_TRUSTED_KEYS", env);
        QCOMPARE(defaultTrustedKeysPath(), trusted_);
    }

    // A run kept as a directory is hashed by its listing: PATH\0SHA256\n per file at any
    // depth (a trainer tree's step folders), PATH relative with '/', in byte order.
    void directoryHash() {
        const std::string dir = path("npydir");
        QVERIFY(QDir().mkpath(QString::fromStdString(dir + "/step_2")));
        spit(dir + "/b.npy", "bee");
        spit(dir + "/a.npy", "ay");
        spit(dir + "/step_2/rank_0.jsonl", "x");
        const std::string want = sha256Hex(std::string("a.npy") + '\0' + sha256Hex("ay") + '\n' + "b.npy" + '\0' +
                                           sha256Hex("bee") + '\n' + "step_2/rank_0.jsonl" + '\0' + sha256Hex("x") +
                                           '\n');
        QCOMPARE(sha256File(dir), want);
        spit(dir + "/step_2/rank_0.jsonl", "y");   // a change deep in the tree changes the hash
        QVERIFY(sha256File(dir) != want);
        spit(dir + "/step_2/rank_0.jsonl", "x");
        QCOMPARE(sha256File(dir), want);
        spit(dir + "/a.npy", "aY");
        QVERIFY(sha256File(dir) != want);
        // sha256Hex itself, against the FIPS 180-2 example.
        QCOMPARE(sha256Hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    }

    // fuzz_signoff's finding: a number beyond double's range is valid JSON syntax, and was
    // an unexpected exception instead of a SignoffError naming the file.
    void hugeNumberIsAClearError() {
        const std::string file = path("huge.json");
        spit(file, "{\"kcx_signoff\": 42e950}");
        try {
            readSignoff(file);
            QFAIL("a record with 42e950 was accepted");
        } catch (const SignoffError& e) {
            QVERIFY2(std::string(e.what()).find("huge.json") != std::string::npos, e.what());
        }
    }

    void recordsBesideTheContract() {
        const std::string dir = path("beside");
        QVERIFY(QDir().mkpath(QString::fromStdString(dir)));
        const std::string c = dir + "/gate.yaml";
        spit(c, "x");
        QCOMPARE(newSignoffPath(c, "Ada L."), dir + "/gate.signoff.json");
        spit(dir + "/gate.signoff.json", "{}");
        QCOMPARE(newSignoffPath(c, "Ada L."), dir + "/gate.Ada_L_.signoff.json");
        spit(dir + "/gate.Ada_L_.signoff.json", "{}");
        QCOMPARE(newSignoffPath(c, "Ada L."), dir + "/gate.Ada_L_.2.signoff.json");
        spit(dir + "/gatekeeper.signoff.json", "{}");   // another contract's
        spit(dir + "/gate.signoff.json.tmp", "{}");
        const std::vector<std::string> want{dir + "/gate.Ada_L_.signoff.json", dir + "/gate.signoff.json"};
        QCOMPARE(signoffsBeside(c), want);
    }

    void tampered_data() {
        using F = std::function<void(SignoffRecord&)>;
        QTest::addColumn<F>("edit");
        QTest::newRow("contract hash") << F([](SignoffRecord& r) { r.contractSha256[0] = 'c'; });
        QTest::newRow("run hash") << F([](SignoffRecord& r) { r.runSha256[63] = 'c'; });
        QTest::newRow("results hash") << F([](SignoffRecord& r) { r.resultsSha256[10] ^= 1; });
        QTest::newRow("verdict") << F([](SignoffRecord& r) { r.verdict = "pass"; });
        QTest::newRow("stage") << F([](SignoffRecord& r) { r.stage = "full"; });
        QTest::newRow("action") << F([](SignoffRecord& r) { r.action = "pass"; });
        QTest::newRow("reviewer") << F([](SignoffRecord& r) { r.reviewer = "Mallory"; });
        QTest::newRow("decision") << F([](SignoffRecord& r) { r.decision = "reject"; });
        QTest::newRow("comment") << F([](SignoffRecord& r) { r.comment = ""; });
        QTest::newRow("time") << F([](SignoffRecord& r) { r.time = "2026-12-03T08:43:09Z"; });
        QTest::newRow("version") << F([](SignoffRecord& r) { r.kcxVersion = "9.9.9"; });
        QTest::newRow("format") << F([](SignoffRecord& r) { r.format = 2; });
        QTest::newRow("fingerprint") << F([](SignoffRecord& r) { r.keyFingerprint = std::string(16, '0'); });
        QTest::newRow("key") << F([this](SignoffRecord& r) {
            r.publicKey = readPublicKey(otherKey_ + ".pub");
            r.keyFingerprint = keyFingerprint(r.publicKey);
        });
        QTest::newRow("signature bit") << F([](SignoffRecord& r) { r.signature[5] = r.signature[5] == '0' ? '1' : '0'; });
        QTest::newRow("signature zero") << F([](SignoffRecord& r) { r.signature = std::string(128, '0'); });
        QTest::newRow("re-signed by another key") << F([this](SignoffRecord& r) {
            r.reviewer = "Mallory";
            signRecord(r, readSecretKey(otherKey_));
            r.publicKey = readPublicKey(key_ + ".pub");   // claims to be the reviewer's key
            r.keyFingerprint = keyFingerprint(r.publicKey);
        });
    }
    void tampered() {
        QFETCH(std::function<void(SignoffRecord&)>, edit);
        SignoffRecord r = signedRecord();
        edit(r);
        QVERIFY(!signatureValid(r));
    }

    // The same through the file: a flipped decision reads fine and fails the signature.
    void tamperedFile() {
        const std::string file = path("t.json");
        writeSignoff(signedRecord(), file);
        json j = json::parse(slurp(file));
        j["decision"] = "reject";
        spit(file, j.dump(2));
        QVERIFY(!signatureValid(readSignoff(file)));
    }

    void malformed_data() {
        QTest::addColumn<QString>("key");     // the key to change ("" = whole document)
        QTest::addColumn<QString>("value");   // its new JSON value ("" = remove)
        QTest::addColumn<QString>("message"); // expected in the error
        QTest::newRow("missing reviewer") << "reviewer" << "" << "reviewer: missing";
        QTest::newRow("reviewer number") << "reviewer" << "7" << "reviewer: must be a string, not number";
        QTest::newRow("empty reviewer") << "reviewer" << R"("")" << "reviewer: must not be empty";
        QTest::newRow("decision") << "decision" << R"("maybe")" << "decision: must be one of approve, reject";
        QTest::newRow("short hash") << "run_sha256" << R"("abc")" << "run_sha256: must be 64 lower-case hex";
        QTest::newRow("upper-case hash") << "contract_sha256" << (R"(")" + QString(64, 'A') + R"(")")
                                         << "contract_sha256: must be 64 lower-case hex";
        QTest::newRow("signature") << "signature" << R"("zz")" << "signature: must be 128 lower-case hex";
        QTest::newRow("time format") << "time" << R"("2026-12-03 08:43")" << "time: must be a UTC time";
        QTest::newRow("no such day") << "time" << R"("2026-02-30T08:43:08Z")" << "time: must be a UTC time";
        QTest::newRow("format") << "kcx_signoff" << "2" << "kcx_signoff: must be 1";
        QTest::newRow("unknown key") << "approved_by" << R"("x")" << "approved_by: unknown key";
        QTest::newRow("verdict") << "verdict" << R"("ok")" << "verdict: must be one of pass, fail, inconclusive";
        QTest::newRow("not an object") << "" << "[1]" << "must be a JSON object";
        QTest::newRow("not json") << "" << "{\"kcx_signoff\": 1," << "not valid JSON";
    }
    void malformed() {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, message);
        const std::string file = path("m.json");
        json j = signoffJson(signedRecord());
        if (key.isEmpty())
            spit(file, value.toStdString());
        else {
            if (value.isEmpty())
                j.erase(key.toStdString());
            else
                j[key.toStdString()] = json::parse(value.toStdString());
            spit(file, j.dump(2));
        }
        try {
            readSignoff(file);
            QFAIL("a malformed record was accepted");
        } catch (const SignoffError& e) {
            const QString what = e.what();
            QVERIFY2(what.startsWith(QString::fromStdString(file) + ": "), e.what());
            QVERIFY2(what.contains(message), e.what());
        }
    }

    void unreadable() {
        QVERIFY_THROWS_EXCEPTION(SignoffError, readSignoff(path("does-not-exist.json")));
        QVERIFY_THROWS_EXCEPTION(SignoffError, readPublicKey(path("does-not-exist.pub")));
    }
};

QTEST_GUILESS_MAIN(TestSignoff)
#include "test_signoff.moc"
