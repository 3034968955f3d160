// Safe writes and safe reads (core/base/safe_write.h, core/base/safe_open.h;
// docs/reliability.md "Writing files", "Opening files"), the cases of issue 16's attack
// list: a link planted at a temporary name, racing writers, a failed write, an output that
// is an input, FIFOs and devices given as inputs, records and keys over their caps, and a
// gzip of zeros that must be stopped while it inflates.
#include <QtTest/QTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/base/errors.h"
#include "core/base/safe_open.h"
#include "core/base/safe_write.h"
#include "core/base/sha256.h"
#include "core/contract/contract.h"
#include "core/formats/loader.h"
#include "core/formats/run_writer.h"
#include "core/signoff/signoff.h"
#include "core/signoff/trusted_keys.h"
#include "tests/support/test_files.h"
#include "tests/support/test_runs.h"

using namespace kcx;
using kcx::test::errorOf;
using kcx::test::TempFiles;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::set<std::string> namesIn(const std::string& dir) {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        names.insert(e.path().filename().string());
    return names;
}

std::string folderOf(const TempFiles& t) { return std::filesystem::path(t.path("x")).parent_path().string(); }

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

std::string signoffErrorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

// A small run for the run writers.
std::shared_ptr<Run> smallRun() { return kcx::test::runFromLogprobs({{-0.5, -1.0, -0.25}}, {{-0.5, -1.5, -0.25}}); }

long maxRssKb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

}  // namespace

class TestSafeWrite : public QObject {
    Q_OBJECT
private slots:
    void writesWholeAndLeavesNoTemporary() {
        TempFiles t;
        const std::string out = t.path("out.json");
        writeFileAtomically(out, "first\n");
        QCOMPARE(slurp(out), std::string("first\n"));
        writeFileAtomically(out, "second, longer\n");
        QCOMPARE(slurp(out), std::string("second, longer\n"));
        QCOMPARE(namesIn(folderOf(t)), std::set<std::string>{"out.json"});
        struct stat st {};
        QVERIFY(::lstat(out.c_str(), &st) == 0 && S_ISREG(st.st_mode));
    }

    // Attack 3: the old fixed temporary name `OUT.tmp` planted as a link to a victim. There
    // is no fixed name any more: the victim is untouched and OUT is a regular file.
    void linkAtTheOldTemporaryNameIsNotFollowed() {
        TempFiles t;
        const std::string victim = t.write("victim.txt", "precious\n");
        for (const std::string name : {"out.safetensors", "out.jsonl", "rec.signoff.json", "out.csv"}) {
            const std::string out = t.path(name);
            QVERIFY(::symlink(victim.c_str(), (out + ".tmp").c_str()) == 0);
            if (name == "out.safetensors")
                writeSafetensors(*smallRun(), out);
            else if (name == "out.jsonl")
                writeJsonl(*smallRun(), out);
            else if (name == "rec.signoff.json") {
                SignoffRecord r;
                r.reviewer = "alice";
                writeSignoff(r, out);
            } else
                writeFileAtomically(out, "a,b\n");
            QCOMPARE(slurp(victim), std::string("precious\n"));
            struct stat st {};
            QVERIFY2(::lstat(out.c_str(), &st) == 0 && S_ISREG(st.st_mode), name.c_str());
            QVERIFY(::lstat((out + ".tmp").c_str(), &st) == 0 && S_ISLNK(st.st_mode));   // left alone
        }
        QCOMPARE(loadRun(t.path("out.safetensors")).tokenCount(), size_t(3));
    }

    // The target itself a link: refused by name, the file it points to untouched.
    void linkAsTheTargetIsRefused() {
        TempFiles t;
        const std::string victim = t.write("victim.txt", "precious\n");
        const std::string out = t.path("out.json");
        QVERIFY(::symlink(victim.c_str(), out.c_str()) == 0);
        const std::string e = errorOf([&] { writeFileAtomically(out, "x"); });
        QVERIFY2(contains(e, out + ": is a symbolic link"), e.c_str());
        QCOMPARE(slurp(victim), std::string("precious\n"));
        const std::string e2 = errorOf([&] { writeSafetensors(*smallRun(), out); });
        QVERIFY2(contains(e2, "symbolic link"), e2.c_str());
        QCOMPARE(slurp(victim), std::string("precious\n"));
        QCOMPARE(namesIn(folderOf(t)), (std::set<std::string>{"out.json", "victim.txt"}));
        // A folder as the target is refused (a rename would replace an empty one); a
        // character device is written straight through, never renamed over.
        const std::string dir = t.path("folder");
        std::filesystem::create_directory(dir);
        const std::string e3 = errorOf([&] { writeFileAtomically(dir, "x"); });
        QVERIFY2(contains(e3, dir + ": is not a regular file (a directory)"), e3.c_str());
        writeFileAtomically("/dev/null", "nothing");
        struct stat st {};
        QVERIFY(::lstat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    }

    // Attack 3: racing writers of one path. Each of 6 processes writes its own large
    // payload several times; a reader watching meanwhile and the final file always hold
    // one payload whole.
    void concurrentWritersNeverMix() {
        TempFiles t;
        const std::string out = t.path("race.bin");
        constexpr int kWriters = 6, kRounds = 4;
        constexpr size_t kSize = size_t(3) << 20;
        auto payload = [](int w) {
            std::string s(kSize, char('A' + w));
            s.replace(0, 8, "writer " + std::to_string(w));
            return s;
        };
        std::vector<pid_t> kids;
        for (int w = 0; w < kWriters; ++w) {
            const pid_t pid = ::fork();
            QVERIFY(pid >= 0);
            if (pid == 0) {
                int rc = 0;
                try {
                    const std::string p = payload(w);
                    for (int r = 0; r < kRounds; ++r) {   // streamed in pieces, like a run
                        AtomicWriter wr(out);
                        for (size_t at = 0; at < p.size(); at += 65536)
                            wr.write(p.data() + at, std::min<size_t>(65536, p.size() - at));
                        wr.commit();
                    }
                } catch (...) {
                    rc = 1;
                }
                ::_exit(rc);
            }
            kids.push_back(pid);
        }
        std::set<std::string> allowed;
        for (int w = 0; w < kWriters; ++w)
            allowed.insert(payload(w));
        int reads = 0;
        for (bool running = true; running;) {
            running = false;
            for (const pid_t k : kids)
                if (::waitpid(k, nullptr, WNOHANG) == 0)
                    running = true;
            const std::string seen = slurp(out);
            if (!seen.empty()) {
                ++reads;
                QVERIFY2(allowed.count(seen), "a reader saw a mixed or partial file");
            }
        }
        for (const pid_t k : kids) {   // already reaped above; a second wait just fails
            int status = 0;
            ::waitpid(k, &status, 0);
        }
        QVERIFY(allowed.count(slurp(out)));
        QCOMPARE(namesIn(folderOf(t)), std::set<std::string>{"race.bin"});
        Q_UNUSED(reads);
    }

    // A write that fails part-way (the file size limit, EFBIG) leaves the old file as it
    // was and no temporary; so does a writer dropped without commit().
    void failedWriteKeepsTheOldFile() {
        TempFiles t;
        const std::string out = t.write("keep.json", "old contents\n");
        {
            AtomicWriter w(out);
            w.write("half of a new ");
        }   // never committed
        QCOMPARE(slurp(out), std::string("old contents\n"));
        QCOMPARE(namesIn(folderOf(t)), std::set<std::string>{"keep.json"});

        const pid_t pid = ::fork();
        QVERIFY(pid >= 0);
        if (pid == 0) {
            ::signal(SIGXFSZ, SIG_IGN);
            rlimit lim{1 << 20, 1 << 20};
            ::setrlimit(RLIMIT_FSIZE, &lim);
            const std::string e = errorOf([&] { writeFileAtomically(out, std::string(size_t(4) << 20, 'x')); });
            ::_exit(contains(e, out + ": cannot write: File too large") ? 0 : 1);
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        QVERIFY(WIFEXITED(status));
        QCOMPARE(WEXITSTATUS(status), 0);
        QCOMPARE(slurp(out), std::string("old contents\n"));
        QCOMPARE(namesIn(folderOf(t)), std::set<std::string>{"keep.json"});

        // A folder that does not exist: named, nothing created.
        const std::string e = errorOf([&] { writeFileAtomically(t.path("no/such/out.json"), "x"); });
        QVERIFY2(contains(e, "cannot create a temporary file in") && contains(e, "No such file or directory"),
                 e.c_str());
    }

    void modesHonourTheUmask() {
        TempFiles t;
        const mode_t old = ::umask(022);
        writeFileAtomically(t.path("out.txt"), "x");
        writeFileAtomically(t.path("secret"), "x", kPrivateMode);
        ::umask(old);
        struct stat st {};
        QVERIFY(::stat(t.path("out.txt").c_str(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0644);
        QVERIFY(::stat(t.path("secret").c_str(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0600);
        // A replaced file keeps its permission bits.
        QVERIFY(::chmod(t.path("out.txt").c_str(), 0640) == 0);
        writeFileAtomically(t.path("out.txt"), "y");
        QVERIFY(::stat(t.path("out.txt").c_str(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0640);
    }

    void keysAreWrittenWholeAndNeverReplaced() {
        TempFiles t;
        const std::string key = t.path("alice.key");
        generateKeyPair(key);
        struct stat st {};
        QVERIFY(::stat(key.c_str(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0600);
        const std::string before = slurp(key);
        const std::string e = signoffErrorOf([&] { generateKeyPair(key); });
        QVERIFY2(contains(e, "already exists"), e.c_str());
        QCOMPARE(slurp(key), before);
        QCOMPARE(namesIn(folderOf(t)), (std::set<std::string>{"alice.key", "alice.key.pub"}));
        readSecretKey(key);
    }

    // Attack 4: an output that is an input, by name, by a link or by a hard link.
    void outputThatIsAnInputIsNamed() {
        TempFiles t;
        const std::string run = t.write("run.jsonl", "{}\n");
        const std::string key = t.write("alice.key", "{}\n");
        const std::string other = t.write("other.json", "{}\n");
        QVERIFY(::symlink(run.c_str(), t.path("link.jsonl").c_str()) == 0);
        QVERIFY(::link(key.c_str(), t.path("hard.key").c_str()) == 0);
        const std::vector<NamedInput> in = {{"run", run}, {"key", key}};
        QCOMPARE(sameFileRefusal(run, in), "refusing to write " + run + ": it is the input run " + run);
        QCOMPARE(sameFileRefusal(t.path("link.jsonl"), in),
                 "refusing to write " + t.path("link.jsonl") + ": it is the input run " + run);
        QCOMPARE(sameFileRefusal(t.path("hard.key"), in),
                 "refusing to write " + t.path("hard.key") + ": it is the input key " + key);
        QCOMPARE(sameFileRefusal(other, in), std::string());
        QCOMPARE(sameFileRefusal(t.path("new.json"), in), std::string());   // not there yet: fine
        QCOMPARE(sameFileRefusal("-", in), std::string());
    }

    // Attack 7: FIFOs and devices as inputs are refused by name at once, never read.
    void fifosAndDevicesAreRefusedByName() {
        TempFiles t;
        const std::string fifo = t.path("run.jsonl");
        QVERIFY(::mkfifo(fifo.c_str(), 0600) == 0);
        const std::string want = fifo + ": is not a regular file (a FIFO)";
        std::string e = errorOf([&] { loadRun(fifo); });
        QVERIFY2(contains(e, want), e.c_str());
        e = errorOf([&] { loadContract(fifo); });
        QVERIFY2(contains(e, want), e.c_str());
        e = errorOf([&] { ::close(openRegularFile(fifo)); });
        QVERIFY2(contains(e, want), e.c_str());
        e = signoffErrorOf([&] { readSignoff(fifo); });
        QVERIFY2(contains(e, want), e.c_str());
        e = signoffErrorOf([&] { readSecretKey(fifo); });
        QVERIFY2(contains(e, want), e.c_str());
        e = signoffErrorOf([&] { readPublicKey(fifo); });
        QVERIFY2(contains(e, want), e.c_str());
        e = signoffErrorOf([&] { readTrustedKeys(fifo); });
        QVERIFY2(contains(e, want), e.c_str());
        e = signoffErrorOf([&] { sha256File(fifo); });
        QVERIFY2(contains(e, want), e.c_str());

        const std::string dev = "/dev/zero";
        e = signoffErrorOf([&] { readSignoff(dev); });
        QVERIFY2(contains(e, "/dev/zero: is not a regular file (a character device)"), e.c_str());
        e = errorOf([&] { loadRun(dev); });
        QVERIFY2(contains(e, "a character device"), e.c_str());
        e = signoffErrorOf([&] { sha256File(dev); });
        QVERIFY2(contains(e, "a character device"), e.c_str());
    }

    // Records are at most 16 MiB, keys and trusted-keys files 1 MiB: refused with the size
    // and the cap before being read.
    void recordsAndKeysHaveSizeCaps() {
        TempFiles t;
        const std::string big = t.path("big.signoff.json");
        {
            std::ofstream f(big, std::ios::binary);
            f.seekp(std::streamoff(kMaxRecordBytes));   // sparse: one byte past the cap
            f.put(' ');
        }
        std::string e = signoffErrorOf([&] { readSignoff(big); });
        QVERIFY2(contains(e, big + ": is " + std::to_string(kMaxRecordBytes + 1) + " bytes, more than a sign-off "
                                   "record may be (" + std::to_string(kMaxRecordBytes) + " bytes)"),
                 e.c_str());
        const std::string key = t.write("big.key.pub", std::string(size_t(kMaxKeyBytes) + 1, ' '));
        e = signoffErrorOf([&] { readPublicKey(key); });
        QVERIFY2(contains(e, key + ": is " + std::to_string(kMaxKeyBytes + 1) + " bytes"), e.c_str());
        e = signoffErrorOf([&] { readTrustedKeys(key); });
        QVERIFY2(contains(e, "more than a trusted keys file may be"), e.c_str());
        e = errorOf([&] { readRegularFile(key, 10, "thing"); });
        QVERIFY2(contains(e, "more than a thing may be (10 bytes)"), e.c_str());
    }

    // Attack 7: a gzip of zeros is stopped while it inflates, at the line limit (no line
    // end) or at the memory limit, not after inflating all of it. Memory stays bounded.
    void gzipOfZerosIsStoppedAsItInflates() {
        TempFiles t;
        const std::string gz = t.path("zeros.jsonl.gz");
        {
            gzFile f = gzopen(gz.c_str(), "wb9");
            QVERIFY(f);
            const std::string zeros(size_t(1) << 20, '\0');
            const std::string header = "{\"kcx_run\":1}\n";
            gzwrite(f, header.data(), unsigned(header.size()));
            for (int i = 0; i < 768; ++i)   // 768 MiB of zeros, under a megabyte compressed
                gzwrite(f, zeros.data(), unsigned(zeros.size()));
            gzclose(f);
        }
        QVERIFY(std::filesystem::file_size(gz) < (size_t(4) << 20));
        const long before = maxRssKb();
        LoadOptions lineLimited;
        lineLimited.maxLineBytes = size_t(8) << 20;
        std::string e = errorOf([&] { loadJsonl(gz, {}, lineLimited); });
        QVERIFY2(contains(e, gz + ":2: line is longer than the limit of " + std::to_string(size_t(8) << 20)), e.c_str());
        LoadOptions memoryLimited;
        memoryLimited.maxMemoryBytes = uint64_t(32) << 20;
        e = errorOf([&] { loadJsonl(gz, {}, memoryLimited); });
        QVERIFY2(contains(e, gz + ": reading this gzip-compressed JSON Lines (at least) run needs about"), e.c_str());
        // A sanity check, not a timing: inflating it all would have taken 768 MiB.
        const long grownKb = maxRssKb() - before;
        QVERIFY2(grownKb < 200 * 1024, qPrintable(QString("peak memory grew by %1 KB").arg(grownKb)));
    }
};

QTEST_GUILESS_MAIN(TestSafeWrite)
#include "test_safe_write.moc"
