// SnapshotFanout: small snapshots reach every consumer at once; a large one reaches them one
// per event-loop turn (timers run between them: the window paints and takes input), a newer
// one arriving meanwhile wins, and no consumer gets the same snapshot twice.

#include "ui/snapshotfanout.h"

#include <QTest>
#include <QTimer>

#include <utility>
#include <vector>

using driftless::ui::EngineSnapshot;
using driftless::ui::SnapshotFanout;

namespace {

EngineSnapshot snapshotOf(std::size_t tables, std::int64_t takenAtMs)
{
    EngineSnapshot s;
    s.takenAtMs = takenAtMs;
    for (std::size_t i = 0; i < tables; ++i) {
        driftless::core::TableReport r;
        r.pipeline = "p";
        r.table = "t" + std::to_string(i);
        s.tables.push_back(std::move(r));
    }
    return s;
}

/// What each consumer got, in order: (consumer, snapshot's takenAtMs, ticks of a 0 ms timer
/// counted before it ran).
struct Log {
    std::vector<std::tuple<int, std::int64_t, int>> got;
    int ticks = 0;
};

} // namespace

class TestSnapshotFanout : public QObject {
    Q_OBJECT
private slots:
    void aSmallSnapshotReachesEveryConsumerAtOnce()
    {
        SnapshotFanout fanout(100);
        Log log;
        for (int c = 0; c < 3; ++c)
            fanout.add([&log, c](const EngineSnapshot &s) { log.got.emplace_back(c, s.takenAtMs, log.ticks); });
        fanout.deliver(snapshotOf(99, 1));
        QCOMPARE(log.got.size(), std::size_t(3));
        for (int c = 0; c < 3; ++c)
            QCOMPARE(std::get<0>(log.got[std::size_t(c)]), c);
        QVERIFY(!fanout.pending());
    }

    void aLargeSnapshotReachesOneConsumerPerTurnWithTimersBetween()
    {
        SnapshotFanout fanout(100);
        Log log;
        for (int c = 0; c < 4; ++c)
            fanout.add([&log, c](const EngineSnapshot &s) { log.got.emplace_back(c, s.takenAtMs, log.ticks); });
        QTimer ticker;
        ticker.setInterval(0);
        QObject::connect(&ticker, &QTimer::timeout, [&log] { ++log.ticks; });
        ticker.start();
        fanout.deliver(snapshotOf(100, 1));
        QVERIFY(log.got.empty()); // nothing within deliver()
        QVERIFY(fanout.pending());
        QTRY_VERIFY_WITH_TIMEOUT(!fanout.pending(), 10000);
        QCOMPARE(log.got.size(), std::size_t(4));
        for (std::size_t i = 0; i < 4; ++i) {
            QCOMPARE(std::get<0>(log.got[i]), int(i));
            QCOMPARE(std::get<1>(log.got[i]), std::int64_t(1));
            if (i > 0) // the event loop ran a timer between two consumers
                QVERIFY2(std::get<2>(log.got[i]) > std::get<2>(log.got[i - 1]), "two consumers in one turn");
        }
    }

    void aNewerSnapshotMidwayWinsAndNoConsumerGetsOneTwice()
    {
        SnapshotFanout fanout(100);
        Log log;
        for (int c = 0; c < 4; ++c)
            fanout.add([&log, &fanout, c](const EngineSnapshot &s) {
                log.got.emplace_back(c, s.takenAtMs, log.ticks);
                // While consumer 1 has the first, a newer one lands (small: it still waits its
                // turn, so no consumer sees snapshots out of order).
                if (c == 1 && s.takenAtMs == 1)
                    fanout.deliver(snapshotOf(5, 2));
            });
        fanout.deliver(snapshotOf(100, 1));
        QTRY_VERIFY_WITH_TIMEOUT(!fanout.pending(), 10000);
        // 2 and 3 get the newer one next, then 0 and 1 get it again; nobody gets the first twice.
        const std::vector<std::pair<int, std::int64_t>> want{{0, 1}, {1, 1}, {2, 2}, {3, 2}, {0, 2}, {1, 2}};
        QCOMPARE(log.got.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(std::get<0>(log.got[i]), want[i].first);
            QCOMPARE(std::get<1>(log.got[i]), want[i].second);
        }
        // Settled: the next small one is at once again.
        fanout.deliver(snapshotOf(5, 3));
        QCOMPARE(log.got.size(), want.size() + 4);
    }

    // A consumer in steps (the Dashboard making its tiles a few thousand a turn) takes one step
    // per turn until it says it has all of it, the next consumer waiting; a newer snapshot
    // landing between two steps is what its next step gets, and every consumer ends with the
    // newest. Below the threshold its steps all run within deliver().
    void aConsumerInStepsTakesOneStepPerTurnAndTheNewestOnes()
    {
        SnapshotFanout fanout(100);
        Log log;
        std::vector<std::pair<std::int64_t, int>> steps; // snapshot, tick
        // Three steps for each snapshot it is given (a newer one starts its count again).
        std::int64_t taking = 0;
        int stepsLeft = 0;
        fanout.add([&log](const EngineSnapshot &s) { log.got.emplace_back(0, s.takenAtMs, log.ticks); });
        fanout.addInSteps([&](const EngineSnapshot &s) {
            steps.emplace_back(s.takenAtMs, log.ticks);
            if (s.takenAtMs != taking) {
                taking = s.takenAtMs;
                stepsLeft = 3;
            }
            if (steps.size() == 2 && s.takenAtMs == 1) // in its second step, a newer one lands
                fanout.deliver(snapshotOf(100, 2));
            if (--stepsLeft > 0)
                return false;
            log.got.emplace_back(1, s.takenAtMs, log.ticks);
            taking = 0;
            return true;
        });
        fanout.add([&log](const EngineSnapshot &s) { log.got.emplace_back(2, s.takenAtMs, log.ticks); });
        QTimer ticker;
        ticker.setInterval(0);
        QObject::connect(&ticker, &QTimer::timeout, [&log] { ++log.ticks; });
        ticker.start();
        fanout.deliver(snapshotOf(100, 1));
        QTRY_VERIFY_WITH_TIMEOUT(!fanout.pending(), 10000);
        // Its steps: two of the first snapshot, then the newer one's three; a timer between each.
        QCOMPARE(steps.size(), std::size_t(5));
        const std::vector<std::int64_t> stepOf{1, 1, 2, 2, 2};
        for (std::size_t i = 0; i < steps.size(); ++i) {
            QCOMPARE(steps[i].first, stepOf[i]);
            if (i > 0)
                QVERIFY2(steps[i].second > steps[i - 1].second, "two steps in one turn");
        }
        // Consumer 2 waited for it; all end with the newest, none got one twice.
        const std::vector<std::pair<int, std::int64_t>> want{{0, 1}, {1, 2}, {2, 2}, {0, 2}};
        QCOMPARE(log.got.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(std::get<0>(log.got[i]), want[i].first);
            QCOMPARE(std::get<1>(log.got[i]), want[i].second);
        }
        // Small: its three steps within deliver().
        steps.clear();
        fanout.deliver(snapshotOf(5, 3));
        QCOMPARE(steps.size(), std::size_t(3));
        QCOMPARE(log.got.size(), want.size() + 3);
        QVERIFY(!fanout.pending());
    }
};

QTEST_MAIN(TestSnapshotFanout)
#include "tst_snapshotfanout.moc"
