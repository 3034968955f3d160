// The half-precision codecs (core/base/half.h): bf16, f16 and the FP8 formats, every bit
// pattern round-tripped and rounding checked at the ties, against the compiler where it has
// a conversion of its own.
#include <QtTest/QTest>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/base/half.h"

using namespace kcx;

class TestHalf : public QObject {
    Q_OBJECT
private slots:
    // ---- half-precision codecs ---------------------------------------------------------------------
    void bf16RoundTripsEveryPattern() {
        for (uint32_t b = 0; b <= 0xffff; ++b) {
            const float f = bf16ToFloat(uint16_t(b));
            const uint16_t back = floatToBf16(f);
            if (std::isnan(f))
                QVERIFY((back & 0x7f80) == 0x7f80 && (back & 0x7f) != 0);
            else if (back != b)
                QFAIL(qPrintable(QString("bf16 0x%1 -> %2 -> 0x%3").arg(b, 4, 16).arg(f).arg(back, 4, 16)));
        }
        QCOMPARE(bf16ToFloat(0x3F80), 1.0f);
        QCOMPARE(bf16ToFloat(0xC000), -2.0f);
        QCOMPARE(floatToBf16(1.0f + std::ldexp(1.0f, -8)), uint16_t(0x3F80));       // tie to even (down)
        QCOMPARE(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), uint16_t(0x3F82));   // tie to even (up)
        QCOMPARE(floatToBf16(std::numeric_limits<float>::max()), uint16_t(0x7F80));  // rounds to infinity
        QCOMPARE(roundBf16(0.1f), bf16ToFloat(0x3DCD));
    }

    void halfRoundTripsEveryPattern() {
        for (uint32_t h = 0; h <= 0xffff; ++h) {
            const float f = halfToFloat(uint16_t(h));
            const uint16_t back = floatToHalf(f);
            if (std::isnan(f))
                QVERIFY((back & 0x7c00) == 0x7c00 && (back & 0x3ff) != 0);
            else if (back != h)
                QFAIL(qPrintable(QString("f16 0x%1 -> %2 -> 0x%3").arg(h, 4, 16).arg(f).arg(back, 4, 16)));
        }
        QCOMPARE(halfToFloat(0x3C00), 1.0f);
        QCOMPARE(halfToFloat(0x3555), 0.333251953125f);
        QCOMPARE(halfToFloat(0x7C00), std::numeric_limits<float>::infinity());
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -25)), uint16_t(0));            // tie to even: 0
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -25) * 1.0001f), uint16_t(1));
        QCOMPARE(floatToHalf(std::ldexp(3.0f, -25)), uint16_t(2));            // tie to even: 2
        QCOMPARE(floatToHalf(65519.0f), uint16_t(0x7BFF));
        QCOMPARE(floatToHalf(65520.0f), uint16_t(0x7C00));
        QCOMPARE(floatToHalf(-1e-30f), uint16_t(0x8000));
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -14) * (1 - std::ldexp(1.0f, -12))), uint16_t(0x0400));   // up to normal
#ifdef __FLT16_MAX__
        // Against the compiler's own conversion, over a sweep of float bit patterns.
        for (uint64_t bits = 0; bits <= 0xffffffffULL; bits += 0x1357) {
            const float f = std::bit_cast<float>(uint32_t(bits));
            if (std::isnan(f))
                continue;
            const uint16_t ref = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
            if (floatToHalf(f) != ref)
                QFAIL(qPrintable(QString("floatToHalf(%1) = 0x%2, expected 0x%3")
                                     .arg(double(f), 0, 'g', 9).arg(floatToHalf(f), 4, 16).arg(ref, 4, 16)));
        }
#endif
    }

    void fp8Codecs() {
        for (uint32_t v = 0; v <= 0xff; ++v) {
            const float f = fp8e4m3ToFloat(uint8_t(v));
            if ((v & 0x7f) == 0x7f) {
                QVERIFY(std::isnan(f));
                continue;
            }
            QVERIFY(std::isfinite(f));
            QCOMPARE(floatToFp8e4m3(f), uint8_t(v));
        }
        QCOMPARE(fp8e4m3ToFloat(0x38), 1.0f);
        QCOMPARE(fp8e4m3ToFloat(0x7E), 448.0f);
        QCOMPARE(fp8e4m3ToFloat(0x01), std::ldexp(1.0f, -9));
        QCOMPARE(floatToFp8e4m3(1000.0f), uint8_t(0x7E));                  // saturates
        QCOMPARE(floatToFp8e4m3(-std::numeric_limits<float>::infinity()), uint8_t(0xFE));
        QCOMPARE(floatToFp8e4m3(464.0f), uint8_t(0x7E));
        QVERIFY(std::isnan(roundFp8e4m3(std::numeric_limits<float>::quiet_NaN())));
        QCOMPARE(floatToFp8e4m3(1.0625f), uint8_t(0x38));                  // tie to even (down)
        QCOMPARE(floatToFp8e4m3(1.1875f), uint8_t(0x3A));                  // tie to even (up)
        QCOMPARE(floatToFp8e4m3(std::ldexp(1.0f, -10)), uint8_t(0x00));    // tie to even: 0
        QCOMPARE(floatToFp8e4m3(std::ldexp(3.0f, -10)), uint8_t(0x02));
        // Every encoding is the nearest value (ties to the even code), on a dense sweep.
        for (float x = -500.0f; x <= 500.0f; x += 0.0371f) {
            const float got = roundFp8e4m3(x);
            float best = 0;
            double bestErr = INFINITY;
            for (uint32_t v = 0; v <= 0xff; ++v) {
                const float c = fp8e4m3ToFloat(uint8_t(v));
                if (std::isnan(c))
                    continue;
                const double err = std::fabs(double(c) - double(std::clamp(x, -448.0f, 448.0f)));
                if (err < bestErr || (err == bestErr && (floatToFp8e4m3(c) & 1) == 0)) {
                    bestErr = err;
                    best = c;
                }
            }
            if (got != best)
                QFAIL(qPrintable(QString("roundFp8e4m3(%1) = %2, nearest is %3").arg(x).arg(got).arg(best)));
        }
        // E5M2.
        QCOMPARE(fp8e5m2ToFloat(0x3C), 1.0f);
        QCOMPARE(fp8e5m2ToFloat(0xC0), -2.0f);
        QCOMPARE(fp8e5m2ToFloat(0x7B), 57344.0f);
        QCOMPARE(fp8e5m2ToFloat(0x01), std::ldexp(1.0f, -16));
        QCOMPARE(fp8e5m2ToFloat(0xFC), -std::numeric_limits<float>::infinity());
        QVERIFY(std::isnan(fp8e5m2ToFloat(0x7D)));
        QVERIFY(std::isnan(fp8e5m2ToFloat(0xFF)));
        // E5M2 is the top byte of an IEEE half.
        for (uint32_t v = 0; v <= 0xff; ++v) {
            const float a = fp8e5m2ToFloat(uint8_t(v)), b = halfToFloat(uint16_t(v << 8));
            QVERIFY(std::isnan(a) ? std::isnan(b) : a == b);
        }
    }
};

QTEST_GUILESS_MAIN(TestHalf)
#include "test_half.moc"
