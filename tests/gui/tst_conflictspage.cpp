// The Conflicts page against real Postgres, as a DBA meets it: a two-way pipeline with
// `conflicts: manual`, run by `driftless-cli run`; the same row changed on both sides while the
// engine is stopped parks a conflict. The app, on the same workspace file, lists them through
// its door, shows base, source and target side by side with the changed cells marked and a Keep
// choice per differing column. Every resolution asks first, and a cancelled one writes nothing;
// Take Target writes the target's version over the source's row, and a per-column choice writes
// the row as chosen to both sides: an independent SQL query on each database then finds the
// same row, and the list is empty. The models run under QAbstractItemModelTester throughout.
// Screenshots go to $DRIFTLESS_ARTIFACTS.

#include "ui/enginebridge.h"
#include "ui/enginedoor.h"
#include "ui/mainwindow.h"
#include "ui/models/conflictrowmodel.h"
#include "ui/models/conflictsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/conflictspage.h"
#include "ui/pages/tablespage.h"

#include "core/db/pgconnection.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/error.h"
#include "core/model/workspace.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <set>
#include <thread>

using namespace driftless;
using driftless::test::saveShot;
using driftless::ui::ConflictRowModel;
using driftless::ui::ConflictsModel;
using driftless::ui::MainWindow;

namespace {

const char *kPeople = "CREATE TABLE people (id int PRIMARY KEY, name text NOT NULL, email text, phone text); "
                      "INSERT INTO people SELECT g, 'name ' || g, 'p' || g || '@old', '555-' || g "
                      "FROM generate_series(1, 50) g";

bool waitFor(const std::function<bool()> &done, int seconds)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
        if (done())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return done();
}

QString cell(const QAbstractItemModel *model, int row, int column, int role = Qt::DisplayRole)
{
    return model->index(row, column).data(role).toString();
}

/// A conflict as the queue keeps it: id 11's phone changed on both sides, email on the source.
core::QueuedConflict sampleConflict()
{
    core::QueuedConflict c;
    c.id = 4;
    c.record.pipeline = "crm";
    c.record.table = "public.people";
    c.record.key = R"({"id":"11"})";
    c.record.columns = R"(["phone"])";
    c.record.base = R"({"email":"p11@old","id":"11","name":"name 11","phone":"555-11"})";
    c.record.source = R"({"email":"new@a","id":"11","name":"name 11","phone":"phone-a"})";
    c.record.target = R"({"email":"p11@old","id":"11","name":"name 11","phone":null})";
    c.detectedAtMs = 1'700'000'000'000;
    c.status = "open";
    return c;
}

/// The two databases and the CLI's engine between them.
struct TwoWay {
    test::PgTestDb a{"cfp_a"};
    test::PgTestDb b{"cfp_b"};
    std::string pipeline = test::uniqueName("cfp");
    test::TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string runLog = dir.file("run.log");
    int engine = -1;

    ~TwoWay()
    {
        stop();
        try {
            core::PgConnection admin(test::pgDsn("postgres"));
            admin.execParams("SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin WHERE roname IN "
                             "($1, $2, $3, $4)",
                             {core::applyOriginName(pipeline),
                              core::applyOriginName(pipeline + core::PipelineSpec::kReverseSuffix),
                              core::resolveOriginName(pipeline),
                              core::resolveOriginName(pipeline + core::PipelineSpec::kReverseSuffix)});
        } catch (const core::Error &e) {
            std::printf("origins not dropped: %s\n", e.describe().c_str());
        }
    }
    void start() { engine = test::spawnCli({"--state", state, "run"}, {}, runLog); }
    void stop()
    {
        if (engine > 0) {
            ::kill(engine, SIGTERM);
            test::waitPid(engine, 120);
            engine = -1;
        }
    }
    /// Both directions' slots confirmed everything written up to now.
    bool quiesced(int seconds)
    {
        const std::string lsn = a.scalar("SELECT pg_current_wal_lsn()");
        return waitFor(
            [&] {
                return a.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name IN ('driftless_" + pipeline +
                                "', 'driftless_" + pipeline + "_rev') AND confirmed_flush_lsn >= '" + lsn +
                                "'::pg_lsn") == "2";
            },
            seconds);
    }
    static std::string row(test::PgTestDb &db, int id)
    {
        return db.scalar("SELECT concat_ws('|', name, email, phone) FROM people WHERE id = " + std::to_string(id));
    }
    static std::string hash(test::PgTestDb &db)
    {
        return db.scalar("SELECT md5(string_agg(concat_ws('|', id, name, email, phone), ',' ORDER BY id)) FROM people");
    }
    nlohmann::json cliConflicts()
    {
        auto r = test::runCli({"--state", state, "conflicts", "--json"});
        return r.exitCode == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
    }
};

/// Clicks the confirmation's button named `name` (or Cancel, for an empty name) once it shows.
void answer(ui::ConflictsPage *page, const QString &name)
{
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    QMessageBox *box = page->confirmation();
    QAbstractButton *button =
        name.isEmpty() ? box->button(QMessageBox::Cancel) : box->findChild<QAbstractButton *>(name);
    QVERIFY(button);
    button->click();
    QTRY_VERIFY(!page->confirmation());
}

/// The list's row of the conflict on `id`'s row, or -1.
int rowOfKey(const ConflictsModel *model, const std::string &id)
{
    for (int r = 0; r < model->rowCount(); ++r)
        if (nlohmann::json::parse(model->conflictAt(r).record.key)["id"] == id)
            return r;
    return -1;
}

/// Replies of the door, kept for the test to look at.
struct Replies {
    std::vector<ui::EngineDoor::Reply> got;
    ui::EngineDoor::Done done()
    {
        return [this](const ui::EngineDoor::Reply &r) { got.push_back(r); };
    }
};

} // namespace

class TestConflictsPage : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void modelsShowAConflictSideBySide();
    void takeTargetResolvesAQueuedConflictOnBothDatabases();
};

void TestConflictsPage::initTestCase()
{
    test::useTestSettings();
}

void TestConflictsPage::modelsShowAConflictSideBySide()
{
    ConflictsModel list;
    QAbstractItemModelTester listTester(&list, QAbstractItemModelTester::FailureReportingMode::Fatal);
    ConflictRowModel grid;
    QAbstractItemModelTester gridTester(&grid, QAbstractItemModelTester::FailureReportingMode::Fatal);

    list.setConflicts({sampleConflict()});
    QCOMPARE(list.rowCount(), 1);
    QCOMPARE(cell(&list, 0, ConflictsModel::Pipeline), QStringLiteral("crm"));
    QCOMPARE(cell(&list, 0, ConflictsModel::Table), QStringLiteral("public.people"));
    QCOMPARE(cell(&list, 0, ConflictsModel::Key), QStringLiteral("id: 11"));
    QCOMPARE(cell(&list, 0, ConflictsModel::Columns), QStringLiteral("phone"));
    QCOMPARE(list.index(0, 0).data(ConflictsModel::IdRole).toLongLong(), 4);
    QCOMPARE(list.rowOfId(4), 0);
    QCOMPARE(list.rowOfId(5), -1);
    QCOMPARE((list.countByTable().at({"crm", "public.people"})), 1);

    grid.setConflict(sampleConflict());
    QCOMPARE(grid.rowCount(), 4);
    QCOMPARE(grid.rowOf(QStringLiteral("id")), 0); // the key first
    QCOMPARE(cell(&grid, 0, ConflictRowModel::ColumnName), QStringLiteral("id (key)"));
    const int phone = grid.rowOf(QStringLiteral("phone"));
    QCOMPARE(cell(&grid, phone, ConflictRowModel::Base), QStringLiteral("555-11"));
    QCOMPARE(cell(&grid, phone, ConflictRowModel::Source), QStringLiteral("phone-a"));
    QCOMPARE(cell(&grid, phone, ConflictRowModel::Target), QStringLiteral("NULL"));
    QVERIFY(grid.index(phone, ConflictRowModel::Target).data(ConflictRowModel::NullRole).toBool());
    QVERIFY(grid.index(phone, ConflictRowModel::Source).data(ConflictRowModel::ChangedRole).toBool());
    QVERIFY(grid.index(phone, ConflictRowModel::Target).data(ConflictRowModel::ChangedRole).toBool());
    QVERIFY(grid.index(phone, ConflictRowModel::ColumnName).data(ConflictRowModel::OverlapRole).toBool());
    QVERIFY(grid.index(phone, ConflictRowModel::Source).data(Qt::BackgroundRole).isValid());
    // Changed on one side only: that side's cell is marked, the other's is not.
    const int email = grid.rowOf(QStringLiteral("email"));
    QVERIFY(grid.index(email, ConflictRowModel::Source).data(ConflictRowModel::ChangedRole).toBool());
    QVERIFY(!grid.index(email, ConflictRowModel::Target).data(ConflictRowModel::ChangedRole).toBool());
    QVERIFY(!grid.index(email, ConflictRowModel::Target).data(Qt::BackgroundRole).isValid());
    QVERIFY(!grid.index(email, ConflictRowModel::ColumnName).data(ConflictRowModel::OverlapRole).toBool());
    const int name = grid.rowOf(QStringLiteral("name"));
    QVERIFY(!grid.index(name, ConflictRowModel::Source).data(ConflictRowModel::ChangedRole).toBool());

    // Keep: the merge's side where only one side changed, nothing for the overlap until chosen.
    QVERIFY(grid.choosable());
    QCOMPARE(grid.index(email, ConflictRowModel::Choice).data(ConflictRowModel::ChoiceRole).toString(),
             QStringLiteral("source"));
    QCOMPARE(cell(&grid, email, ConflictRowModel::Choice), QStringLiteral("Source"));
    QCOMPARE(grid.index(phone, ConflictRowModel::Choice).data(ConflictRowModel::ChoiceRole).toString(), QString());
    QCOMPARE(cell(&grid, phone, ConflictRowModel::Choice), QStringLiteral("choose"));
    QCOMPARE(cell(&grid, name, ConflictRowModel::Choice), QString()); // the sides agree
    QVERIFY(!grid.index(name, ConflictRowModel::Choice).data(ConflictRowModel::DiffersRole).toBool());
    QVERIFY(!grid.choiceComplete());
    QVERIFY(!grid.setChoice(QStringLiteral("name"), QStringLiteral("target"))); // nothing to choose
    QVERIFY(!grid.setChoice(QStringLiteral("phone"), QStringLiteral("sideways")));
    QVERIFY(grid.setChoice(QStringLiteral("phone"), QStringLiteral("target")));
    QVERIFY(grid.choiceComplete());
    QCOMPARE(grid.choicesBeyondMerge(), (std::vector<std::pair<std::string, std::string>>{{"phone", "target"}}));
    QVERIFY(grid.setChoice(QStringLiteral("email"), QStringLiteral("target")));
    QCOMPARE(grid.choicesBeyondMerge().size(), std::size_t{2});
    grid.resetChoices();
    QVERIFY(!grid.choiceComplete());
    QVERIFY(grid.choicesBeyondMerge().empty());

    // A side without the row (deleted there) reads "no row", not an empty value.
    auto deleted = sampleConflict();
    deleted.record.target = "null";
    grid.setConflict(deleted);
    QVERIFY(!grid.choosable()); // a deleted row has no columns to choose
    QVERIFY(!grid.choiceComplete());
    QCOMPARE(cell(&grid, grid.rowOf(QStringLiteral("name")), ConflictRowModel::Target), QStringLiteral("no row"));
    QVERIFY(grid.index(grid.rowOf(QStringLiteral("name")), ConflictRowModel::Target)
                .data(ConflictRowModel::ChangedRole)
                .toBool());
    grid.clear();
    QCOMPARE(grid.rowCount(), 0);
    list.setConflicts({});
    QCOMPARE(list.rowCount(), 0);
}

void TestConflictsPage::takeTargetResolvesAQueuedConflictOnBothDatabases()
{
    TwoWay s;
    s.a.exec(kPeople);
    test::writeFile(s.dir.file("ws.yaml"),
                    "endpoints:\n  a: { kind: postgres, dsn: \"" + s.a.dsn() + "\" }\n  b: { kind: postgres, dsn: \"" +
                        s.b.dsn() + "\" }\npipelines:\n  - name: " + s.pipeline +
                        "\n    source: a\n    target: b\n    direction: both\n    tables:\n"
                        "      - table: public.people\n        strategy: cdc\n        conflicts: manual\n");
    auto applied = test::runCli({"--state", s.state, "apply", "--no-check", s.dir.file("ws.yaml")});
    QVERIFY2(applied.exitCode == 0, (applied.out + applied.err).c_str());
    s.start();
    QVERIFY2(waitFor(
                 [&] {
                     return s.b.scalar("SELECT to_regclass('public.people') IS NOT NULL") == "t" &&
                            s.b.scalar("SELECT count(*) FROM people") == "50" &&
                            s.a.scalar("SELECT to_regclass('_driftless.checkpoints') IS NOT NULL") == "t" &&
                            s.a.scalar("SELECT count(*) FROM _driftless.checkpoints WHERE pipeline = '" + s.pipeline +
                                       "_rev'") == "1";
                 },
                 180),
             test::readFile(s.runLog).c_str());
    QVERIFY2(s.quiesced(120), test::readFile(s.runLog).c_str());
    s.stop();
    // The same column of the same row changed on both sides while the engine is stopped: with
    // `manual`, neither side is written and the row waits for a person.
    s.a.exec("UPDATE people SET phone = 'phone-a', email = 'eleven@a' WHERE id = 11");
    s.b.exec("UPDATE people SET phone = 'phone-b' WHERE id = 11");
    s.a.exec("UPDATE people SET name = 'twelve on a' WHERE id = 12");
    s.b.exec("UPDATE people SET name = 'twelve on b' WHERE id = 12");
    s.start();
    QVERIFY2(s.quiesced(120), test::readFile(s.runLog).c_str());
    QVERIFY2(waitFor([&] { return s.cliConflicts()["conflicts"].size() == 2; }, 60), test::readFile(s.runLog).c_str());

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    auto *page = w.conflictsPage();
    QVERIFY(page);
    QAbstractItemModelTester listTester(page->model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester gridTester(page->rowModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester tablesTester(w.tablesModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    w.resize(1180, 720);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const int tab = w.pages()->indexOf(page);
    QVERIFY(tab >= 0);
    QCOMPARE(w.pages()->tabText(tab), QStringLiteral("Conflicts"));
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(s.state));

    // Listed through the app's door, with the count on the navigation and a mark on the table.
    QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 2, 60000);
    QCOMPARE(w.pages()->tabText(tab), QStringLiteral("Conflicts (2)"));
    const int eleven = rowOfKey(page->model(), "11");
    QVERIFY(eleven >= 0);
    const auto listed = page->model()->conflictAt(eleven);
    QCOMPARE(QString::fromStdString(listed.record.pipeline), QString::fromStdString(s.pipeline));
    QCOMPARE(cell(page->model(), eleven, ConflictsModel::Table), QStringLiteral("public.people"));
    QCOMPARE(cell(page->model(), eleven, ConflictsModel::Key), QStringLiteral("id: 11"));
    QCOMPARE(cell(page->model(), eleven, ConflictsModel::Columns), QStringLiteral("phone"));
    QTRY_VERIFY_WITH_TIMEOUT(
        w.tablesModel()->rowOf(QString::fromStdString(s.pipeline), QStringLiteral("public.people")) >= 0, 30000);
    const int tableRow = w.tablesModel()->rowOf(QString::fromStdString(s.pipeline), QStringLiteral("public.people"));
    QCOMPARE(w.tablesModel()->index(tableRow, ui::TablesModel::Table).data(ui::TablesModel::ConflictsRole).toInt(), 2);
    QVERIFY(w.tablesModel()->index(tableRow, ui::TablesModel::Table).data(Qt::DecorationRole).isValid());

    // Both directions of the table, each with its own row, state and position.
    const QString reverse = QString::fromStdString(s.pipeline + "_rev");
    QTRY_VERIFY_WITH_TIMEOUT(w.tablesModel()->rowOf(reverse, QStringLiteral("public.people")) >= 0, 30000);
    const int reverseRow = w.tablesModel()->rowOf(reverse, QStringLiteral("public.people"));
    QCOMPARE(cell(w.tablesModel(), tableRow, ui::TablesModel::Pipeline),
             QString::fromStdString(s.pipeline) + QStringLiteral(": a \u2192 b"));
    QCOMPARE(cell(w.tablesModel(), reverseRow, ui::TablesModel::Pipeline),
             QString::fromStdString(s.pipeline) + QStringLiteral(": b \u2192 a"));
    QVERIFY(w.tablesModel()
                ->index(reverseRow, ui::TablesModel::Pipeline)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("reverse direction")));
    const auto &back = w.tablesModel()->report(reverseRow);
    QVERIFY(back.reverse);
    QCOMPARE(back.target, std::string("a:public.people"));
    QVERIFY2(!back.checkpoint.empty(), "the reverse direction's stream position is shown");
    QVERIFY(back.state != core::TableState::Error);
    {
        // The CLI's status says the same.
        auto status = test::runCli({"--state", s.state, "status", "--json"});
        QVERIFY2(status.exitCode == 0, status.err.c_str());
        const auto j = nlohmann::json::parse(status.out);
        int directions = 0;
        for (const auto &t : j["tables"])
            if (t["two_way"].is_object() && t["two_way"]["pipeline"] == s.pipeline) {
                ++directions;
                const bool rev = t["two_way"]["direction"] == "reverse";
                QCOMPARE(QString::fromStdString(t["pipeline"].get<std::string>()),
                         rev ? reverse : QString::fromStdString(s.pipeline));
                QCOMPARE(QString::fromStdString(t["source"].get<std::string>()),
                         rev ? QStringLiteral("b:public.people") : QStringLiteral("a:public.people"));
                QVERIFY(!t["checkpoint"].is_null());
            }
        QCOMPARE(directions, 2);
    }
    w.pages()->setCurrentWidget(w.tablesPage());
    w.tablesPage()->selectTable(reverse, QStringLiteral("public.people"));
    QVERIFY(!w.tablesPage()->pauseButton()->isEnabled());
    QVERIFY(w.tablesPage()->pauseButton()->toolTip().contains(QString::fromStdString(s.pipeline)));
    QVERIFY(!w.tablesPage()->backfillButton()->isEnabled());
    for (int c : {int(ui::TablesModel::Pipeline), int(ui::TablesModel::Table)})
        w.tablesPage()->view()->resizeColumnToContents(c);
    saveShot(&w, QStringLiteral("tables-two-way"));
    w.pages()->setCurrentWidget(page);

    // Row 12: Take Target asks first, saying what is written where; cancelled, nothing is.
    page->selectRow(rowOfKey(page->model(), "12"));
    auto *grid = page->rowModel();
    QTRY_COMPARE(grid->rowCount(), 4);
    QTRY_VERIFY(page->takeTargetButton()->isEnabled());
    page->takeTargetButton()->click();
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    QVERIFY2(page->confirmation()->text().contains(QStringLiteral("target's version")),
             qPrintable(page->confirmation()->text()));
    const QString twelveText = page->confirmation()->informativeText();
    QVERIFY2(twelveText.contains(QStringLiteral("On the source (a)")) && twelveText.contains(QStringLiteral("name")) &&
                 twelveText.contains(QStringLiteral("twelve on b")),
             qPrintable(twelveText));
    QVERIFY2(twelveText.contains(QStringLiteral("On the target (b)</b>: nothing is written")), qPrintable(twelveText));
    QVERIFY(!page->takeSourceButton()->isEnabled()); // one question at a time
    answer(page, {});
    QVERIFY(!page->resolving());
    QCOMPARE(QString::fromStdString(TwoWay::row(s.a, 12)), QStringLiteral("twelve on a|p12@old|555-12"));
    QCOMPARE(QString::fromStdString(TwoWay::row(s.b, 12)), QStringLiteral("twelve on b|p12@old|555-12"));
    QCOMPARE(s.cliConflicts()["conflicts"].size(), std::size_t{2});
    QVERIFY(page->takeTargetButton()->isEnabled());
    page->takeTargetButton()->click();
    answer(page, QStringLiteral("confirmResolve"));
    QTRY_VERIFY_WITH_TIMEOUT(!page->resolving(), 60000);
    QVERIFY2(page->resultLabel()->text().contains(QStringLiteral("target's version")),
             qPrintable(page->resultLabel()->text()));
    // Said once on this screen: the page's own line, not the status bar as well.
    QVERIFY2(!w.statusBar()->currentMessage().contains(QStringLiteral("target's version")),
             qPrintable(w.statusBar()->currentMessage()));
    QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 1, 30000);
    QCOMPARE(QString::fromStdString(TwoWay::row(s.a, 12)), QStringLiteral("twelve on b|p12@old|555-12"));
    QCOMPARE(QString::fromStdString(TwoWay::row(s.b, 12)), QStringLiteral("twelve on b|p12@old|555-12"));

    // Row 11 side by side: base, source and target, changes marked, a Keep choice per column.
    page->selectRow(rowOfKey(page->model(), "11"));
    QTRY_COMPARE(page->selectedRow(), 0);
    QTRY_COMPARE(grid->rowCount(), 4);
    const int phone = grid->rowOf(QStringLiteral("phone"));
    QVERIFY(phone >= 0);
    QCOMPARE(cell(grid, phone, ConflictRowModel::Base), QStringLiteral("555-11"));
    QCOMPARE(cell(grid, phone, ConflictRowModel::Source), QStringLiteral("phone-a"));
    QCOMPARE(cell(grid, phone, ConflictRowModel::Target), QStringLiteral("phone-b"));
    QVERIFY(grid->index(phone, ConflictRowModel::Source).data(ConflictRowModel::ChangedRole).toBool());
    QVERIFY(grid->index(phone, ConflictRowModel::Target).data(ConflictRowModel::ChangedRole).toBool());
    QVERIFY(grid->index(phone, ConflictRowModel::ColumnName).data(ConflictRowModel::OverlapRole).toBool());
    const int email = grid->rowOf(QStringLiteral("email"));
    QCOMPARE(cell(grid, email, ConflictRowModel::Source), QStringLiteral("eleven@a"));
    QCOMPARE(cell(grid, email, ConflictRowModel::Target), QStringLiteral("p11@old"));
    QVERIFY(!grid->index(email, ConflictRowModel::Target).data(ConflictRowModel::ChangedRole).toBool());
    QVERIFY(page->takeSourceButton()->isEnabled());
    QVERIFY(page->takeTargetButton()->isEnabled());
    // The email only the source changed defaults to the source; the phone both changed waits for
    // a choice, and until then the row cannot be applied. The sides agree on the name: no choice.
    QComboBox *emailBox = page->choiceBox(QStringLiteral("email"));
    QComboBox *phoneBox = page->choiceBox(QStringLiteral("phone"));
    QVERIFY(emailBox && phoneBox);
    QVERIFY(!page->choiceBox(QStringLiteral("name")));
    QCOMPARE(emailBox->currentData().toString(), QStringLiteral("source"));
    QCOMPARE(phoneBox->currentData().toString(), QString());
    QVERIFY(!page->applyChoiceButton()->isEnabled());
    phoneBox->setCurrentIndex(phoneBox->findData(QStringLiteral("target")));
    QCOMPARE(grid->index(phone, ConflictRowModel::Choice).data(ConflictRowModel::ChoiceRole).toString(),
             QStringLiteral("target"));
    QTRY_VERIFY(page->applyChoiceButton()->isEnabled());
    QCOMPARE(page->applyChoiceButton()->text(), QStringLiteral("Apply Choice"));
    saveShot(&w, QStringLiteral("conflicts"));

    // Neither side was written while it waited.
    QCOMPARE(QString::fromStdString(s.a.scalar("SELECT phone FROM people WHERE id = 11")), QStringLiteral("phone-a"));
    QCOMPARE(QString::fromStdString(s.b.scalar("SELECT phone FROM people WHERE id = 11")), QStringLiteral("phone-b"));

    // The choice asks first: the source gets the target's phone, the target the source's email.
    page->applyChoiceButton()->click();
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    const QString elevenText = page->confirmation()->informativeText();
    QVERIFY2(elevenText.contains(QStringLiteral("On the source (a)")) && elevenText.contains(QStringLiteral("phone-b")),
             qPrintable(elevenText));
    QVERIFY2(elevenText.contains(QStringLiteral("On the target (b)")) &&
                 elevenText.contains(QStringLiteral("eleven@a")),
             qPrintable(elevenText));
    saveShot(page->confirmation(), QStringLiteral("dialog-resolve-conflict"));
    answer(page, QStringLiteral("confirmResolve"));
    QTRY_VERIFY_WITH_TIMEOUT(!page->resolving(), 60000);
    QVERIFY2(page->resultLabel()->text().contains(QStringLiteral("chosen version")),
             qPrintable(page->resultLabel()->text()));
    QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 0, 30000);
    QCOMPARE(w.pages()->tabText(tab), QStringLiteral("Conflicts"));
    QCOMPARE(grid->rowCount(), 0);
    QTRY_COMPARE(w.tablesModel()->index(tableRow, ui::TablesModel::Table).data(ui::TablesModel::ConflictsRole).toInt(),
                 0);

    // Both databases, asked on their own, hold the row as chosen: the source's email, the
    // target's phone.
    QCOMPARE(QString::fromStdString(TwoWay::row(s.a, 11)), QStringLiteral("name 11|eleven@a|phone-b"));
    QCOMPARE(QString::fromStdString(TwoWay::row(s.b, 11)), QStringLiteral("name 11|eleven@a|phone-b"));
    QVERIFY2(s.quiesced(120), test::readFile(s.runLog).c_str());
    QCOMPARE(QString::fromStdString(TwoWay::row(s.b, 11)), QStringLiteral("name 11|eleven@a|phone-b"));
    QCOMPARE(QString::fromStdString(TwoWay::hash(s.a)), QString::fromStdString(TwoWay::hash(s.b)));
    QCOMPARE(s.cliConflicts()["conflicts"].size(), std::size_t{0});

    // The same route refuses what it cannot do, each with its own status.
    Replies replies;
    auto *door = w.engine()->door();
    QVERIFY(door);
    door->post(QStringLiteral("/api/v1/conflicts/%1/resolve").arg(listed.id), {{"take", "source"}}, this,
               replies.done());
    door->post(QStringLiteral("/api/v1/conflicts/999999/resolve"), {{"take", "source"}}, this, replies.done());
    door->post(QStringLiteral("/api/v1/conflicts/%1/resolve").arg(listed.id), {{"take", "both"}}, this, replies.done());
    QTRY_COMPARE_WITH_TIMEOUT(replies.got.size(), std::size_t{3}, 30000);
    std::multiset<int> statuses;
    for (const auto &r : replies.got) {
        statuses.insert(r.status);
        QVERIFY(!r.error.isEmpty());
    }
    QCOMPARE(statuses, (std::multiset<int>{400, 404, 409}));
    QCOMPARE(QString::fromStdString(TwoWay::row(s.a, 11)), QStringLiteral("name 11|eleven@a|phone-b"));
}

QTEST_MAIN(TestConflictsPage)
#include "tst_conflictspage.moc"
