#include "ui/dialogs/tablesettingspanel.h"

#include "ui/dialogs/pipelinesettingspanel.h"
#include "ui/widgets/settingfields.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>

namespace driftless::ui {

using namespace settingfields;

namespace {
QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

bool isCount(const QString &text)
{
    return !text.isEmpty() && std::all_of(text.begin(), text.end(), [](QChar c) { return c.isDigit(); });
}

QLabel *buddy(const QString &text, QWidget *field, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    label->setBuddy(field);
    return label;
}
} // namespace

TableSettingsPanel::TableSettingsPanel(QWidget *parent)
    : QWidget(parent), m_cursor(new QComboBox(this)), m_lookback(new QLineEdit(this)), m_pageSize(new QLineEdit(this)),
      m_every(new QLineEdit(this)), m_sla(new QLineEdit(this)), m_truncate(new QComboBox(this)),
      m_fallbackCursor(new QComboBox(this)), m_addColumn(new QComboBox(this)), m_dropColumn(new QComboBox(this)),
      m_typeChange(new QComboBox(this)), m_renameColumn(new QComboBox(this)), m_adopt(new QComboBox(this)),
      m_key(new QLineEdit(this)), m_fallbackNote(new QLabel(this))
{
    setObjectName(QStringLiteral("tableSettings"));
    m_cursor->setObjectName(QStringLiteral("cursorColumn"));
    m_cursor->setToolTip(tr("The column cursor sync reads past: rows whose value is beyond the last one seen"));
    m_lookback->setObjectName(QStringLiteral("lookback"));
    m_lookback->setPlaceholderText(tr("%1 (default)").arg(QLatin1String(core::TableSpec::kDefaultLookback)));
    m_lookback->setToolTip(tr("How far behind the cursor each pass reads again, for rows committed late: a "
                              "duration (10m) or, for numeric cursors, a count"));
    m_pageSize->setObjectName(QStringLiteral("pageSize"));
    m_pageSize->setPlaceholderText(tr("%1 (default)").arg(core::TableSpec::kDefaultPageSize));
    m_pageSize->setToolTip(tr("Rows per page of a cursor pass, and per chunk of a CDC table's initial load (1 to "
                              "1000000)"));
    m_every->setObjectName(QStringLiteral("every"));
    m_every->setToolTip(tr("How often a pass runs: a full refresh copies the table, a cursor pass reads what "
                           "changed (5m, 1h)"));
    m_sla->setObjectName(QStringLiteral("freshnessSla"));
    m_sla->setToolTip(tr("Alert when the table is staler than this (90s, 10m, 1h)"));
    fillChoices(m_truncate, tr("default (apply)"), {QStringLiteral("apply"), QStringLiteral("ignore")});
    m_truncate->setObjectName(QStringLiteral("truncate"));
    m_truncate->setToolTip(tr("What a TRUNCATE of the source table does to the target: apply it, or ignore it"));
    m_fallbackCursor->setObjectName(QStringLiteral("fallbackCursor"));
    m_fallbackCursor->setEditable(true);
    m_fallbackCursor->setInsertPolicy(QComboBox::NoInsert);
    m_fallbackCursor->setToolTip(tr("The column cursor sync follows if the slot guard gives up the slot and falls "
                                    "back; empty: a column named like updated_at, modified_at or last_modified"));
    fillChoices(m_addColumn, tr("pipeline's"), PipelineSettingsPanel::addColumnPolicies());
    fillChoices(m_dropColumn, tr("pipeline's"), PipelineSettingsPanel::dropColumnPolicies());
    fillChoices(m_typeChange, tr("pipeline's"), PipelineSettingsPanel::typeChangePolicies());
    fillChoices(m_renameColumn, tr("pipeline's"), PipelineSettingsPanel::renameColumnPolicies());
    m_addColumn->setObjectName(QStringLiteral("tableAddColumn"));
    m_dropColumn->setObjectName(QStringLiteral("tableDropColumn"));
    m_typeChange->setObjectName(QStringLiteral("tableTypeChange"));
    m_renameColumn->setObjectName(QStringLiteral("tableRenameColumn"));
    fillChoices(m_adopt, tr("pipeline's"), {QStringLiteral("true"), QStringLiteral("false")});
    m_adopt->setObjectName(QStringLiteral("tableAdopt"));
    m_adopt->setToolTip(tr("A target table that exists already (a pg_dump copy, another tool's replica): true takes "
                           "it, compares its rows with the source and copies only what differs; false refuses it"));
    m_key->setObjectName(QStringLiteral("tableKey"));
    m_key->setPlaceholderText(tr("its own key (default)"));
    m_key->setToolTip(tr("The columns rows are keyed by, comma-separated, for a table without a primary key or unique "
                         "index on NOT NULL columns (key: [...]). Their values must be unique and never NULL on the "
                         "source; a Postgres CDC table needs REPLICA IDENTITY FULL"));
    m_fallbackNote->setObjectName(QStringLiteral("fallbackNote"));
    m_fallbackNote->setWordWrap(true);
    m_fallbackNote->setText(tr("\u26a0 The slot guard switched this table from CDC to cursor sync (fallback_from: "
                               "cdc): Promote to CDC on the Tables page switches it back."));

    // Three columns of fields, two rows: what each strategy uses sits together.
    auto *grid = new QGridLayout;
    grid->addWidget(buddy(tr("&Cursor column:"), m_cursor, this), 0, 0);
    grid->addWidget(m_cursor, 0, 1);
    grid->addWidget(buddy(tr("&Lookback:"), m_lookback, this), 0, 2);
    grid->addWidget(m_lookback, 0, 3);
    grid->addWidget(buddy(tr("Pa&ge size:"), m_pageSize, this), 0, 4);
    grid->addWidget(m_pageSize, 0, 5);
    grid->addWidget(buddy(tr("&Every:"), m_every, this), 1, 0);
    grid->addWidget(m_every, 1, 1);
    grid->addWidget(buddy(tr("&Freshness SLA:"), m_sla, this), 1, 2);
    grid->addWidget(m_sla, 1, 3);
    grid->addWidget(buddy(tr("Tr&uncate:"), m_truncate, this), 1, 4);
    grid->addWidget(m_truncate, 1, 5);
    grid->addWidget(buddy(tr("Fallbac&k cursor:"), m_fallbackCursor, this), 2, 0);
    grid->addWidget(m_fallbackCursor, 2, 1);
    grid->addWidget(buddy(tr("A&dopt existing target:"), m_adopt, this), 2, 2);
    grid->addWidget(m_adopt, 2, 3);
    grid->addWidget(buddy(tr("Ke&y columns:"), m_key, this), 2, 4);
    grid->addWidget(m_key, 2, 5);
    for (int c : {1, 3, 5})
        grid->setColumnStretch(c, 1);

    auto *changes = new QHBoxLayout;
    changes->addWidget(new QLabel(tr("Schema changes: added"), this));
    changes->addWidget(m_addColumn, 1);
    changes->addWidget(new QLabel(tr("dropped"), this));
    changes->addWidget(m_dropColumn, 1);
    changes->addWidget(new QLabel(tr("retyped"), this));
    changes->addWidget(m_typeChange, 1);
    changes->addWidget(new QLabel(tr("renamed"), this));
    changes->addWidget(m_renameColumn, 1);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(grid);
    layout->addLayout(changes);
    layout->addWidget(m_fallbackNote);

    connect(m_cursor, &QComboBox::currentIndexChanged, this, &TableSettingsPanel::settingsChanged);
    // Typed (table_defaults' cursor): each keystroke is an edit.
    connect(m_cursor, &QComboBox::editTextChanged, this, [this] {
        if (m_defaults)
            emit settingsChanged();
    });
    for (QLineEdit *edit : {m_lookback, m_pageSize, m_every, m_sla, m_key})
        connect(edit, &QLineEdit::textChanged, this, &TableSettingsPanel::settingsChanged);
    connect(m_fallbackCursor, &QComboBox::currentTextChanged, this, &TableSettingsPanel::settingsChanged);
    for (QComboBox *box : {m_truncate, m_addColumn, m_dropColumn, m_typeChange, m_renameColumn, m_adopt})
        connect(box, &QComboBox::currentIndexChanged, this, &TableSettingsPanel::settingsChanged);
    clearTable();
}

void TableSettingsPanel::clearTable()
{
    const QSignalBlocker b1(m_cursor), b2(m_lookback), b3(m_pageSize), b4(m_every), b5(m_sla), b6(m_truncate),
        b7(m_fallbackCursor), b8(m_addColumn), b9(m_dropColumn), b10(m_typeChange), b11(m_renameColumn), b12(m_adopt),
        b13(m_key);
    m_included = false;
    m_defaults = false;
    m_cursor->setEditable(false);
    m_cursor->clear();
    m_fallbackCursor->clear();
    for (QLineEdit *edit : {m_lookback, m_pageSize, m_every, m_sla, m_key}) {
        edit->clear();
        edit->setEnabled(false);
    }
    m_every->setPlaceholderText(QString());
    m_sla->setPlaceholderText(QString());
    for (QComboBox *box :
         {m_cursor, m_truncate, m_fallbackCursor, m_addColumn, m_dropColumn, m_typeChange, m_renameColumn, m_adopt}) {
        if (box->count() > 0)
            box->setCurrentIndex(0);
        box->setEnabled(false);
    }
    m_fallbackNote->hide();
}

void TableSettingsPanel::setTable(const core::TableSpec &spec, const QStringList &candidates,
                                  const std::optional<std::string> &suggestedCursor, bool included,
                                  core::EndpointKind sourceKind)
{
    const QSignalBlocker b1(m_cursor), b2(m_lookback), b3(m_pageSize), b4(m_every), b5(m_sla), b6(m_truncate),
        b7(m_fallbackCursor), b8(m_addColumn), b9(m_dropColumn), b10(m_typeChange), b11(m_renameColumn), b12(m_adopt),
        b13(m_key);
    m_strategy = spec.strategy;
    m_included = included;
    m_defaults = false;
    m_cursor->setEditable(false);
    const bool cursor = spec.strategy == core::Strategy::Cursor;
    const bool cdc = spec.strategy == core::Strategy::Cdc;

    m_cursor->clear();
    for (const QString &c : candidates)
        m_cursor->addItem(c, c);
    const std::optional<std::string> column = spec.cursor ? spec.cursor : suggestedCursor;
    if (column && m_cursor->findData(qs(*column)) < 0)
        m_cursor->addItem(qs(*column), qs(*column));
    if (column)
        m_cursor->setCurrentIndex(m_cursor->findData(qs(*column)));
    m_cursor->setEnabled(included && cursor && m_cursor->count() > 0);

    m_lookback->setText(qs(spec.lookback.value_or(std::string())));
    m_lookback->setEnabled(included && cursor);
    m_pageSize->setText(spec.pageSize ? QString::number(*spec.pageSize) : QString());
    m_pageSize->setEnabled(included && (cursor || cdc));
    m_every->setText(durationText(spec.every));
    m_every->setEnabled(included && !cdc);
    core::TableSpec defaults = spec;
    defaults.every.reset();
    m_every->setPlaceholderText(cdc ? tr("streams continuously")
                                    : tr("%1 (default)").arg(qs(core::formatDuration(defaults.effectiveEvery()))));
    m_sla->setText(durationText(spec.freshnessSla));
    defaults = spec;
    defaults.freshnessSla.reset();
    m_sla->setPlaceholderText(tr("%1 (default)").arg(qs(core::formatDuration(defaults.effectiveSla()))));
    m_sla->setEnabled(included);

    setChoice(m_truncate, spec.truncate);
    m_truncate->setEnabled(included && cdc);
    m_fallbackCursor->clear();
    m_fallbackCursor->addItem(QString());
    for (const QString &c : candidates)
        m_fallbackCursor->addItem(c);
    m_fallbackCursor->setCurrentText(qs(spec.fallbackCursor.value_or(std::string())));
    m_fallbackCursor->lineEdit()->setPlaceholderText(tr("like updated_at (default)"));
    // Only a Postgres source's slot guard falls back to cursor sync.
    m_fallbackCursor->setEnabled(included && cdc && sourceKind == core::EndpointKind::Postgres);

    setChoice(m_addColumn, spec.addColumn);
    setChoice(m_dropColumn, spec.dropColumn);
    setChoice(m_typeChange, spec.typeChange);
    setChoice(m_renameColumn, spec.renameColumn);
    const int rename = m_renameColumn->findData(QStringLiteral("rename"));
    if (auto *items = qobject_cast<QStandardItemModel *>(m_renameColumn->model()); items && rename >= 0)
        items->item(rename)->setEnabled(sourceKind == core::EndpointKind::Postgres);
    setBoolChoice(m_adopt, spec.adopt);
    for (QComboBox *box : {m_addColumn, m_dropColumn, m_typeChange, m_renameColumn, m_adopt})
        box->setEnabled(included);
    QStringList key;
    for (const auto &k : spec.key.value_or(std::vector<std::string>{}))
        key << qs(k);
    m_key->setText(key.join(QStringLiteral(", ")));
    m_key->setPlaceholderText(tr("its own key (default)")); // setDefaults() says "per table only"
    m_key->setEnabled(included);
    m_fallbackNote->setVisible(spec.fallbackFrom.has_value());
}

void TableSettingsPanel::setDefaults(const core::TableSpec &keys, std::optional<core::Strategy> strategy,
                                     core::EndpointKind sourceKind)
{
    core::TableSpec spec = keys;
    spec.strategy = strategy.value_or(core::Strategy::Cursor);
    spec.fallbackFrom.reset();
    setTable(spec, {}, std::nullopt, true, sourceKind);
    const QSignalBlocker b1(m_cursor), b2(m_every), b3(m_sla);
    m_defaults = true;
    m_cursor->setEditable(true);
    m_cursor->setInsertPolicy(QComboBox::NoInsert);
    m_cursor->clear();
    m_cursor->setCurrentText(qs(keys.cursor.value_or(std::string())));
    m_cursor->lineEdit()->setPlaceholderText(tr("each table's best timestamp column"));
    // Unset: each table's own strategy decides, so every field may apply to some table.
    const bool any = !strategy;
    const bool cursor = any || strategy == core::Strategy::Cursor;
    const bool cdc = any || strategy == core::Strategy::Cdc;
    m_cursor->setEnabled(cursor);
    m_lookback->setEnabled(cursor);
    m_pageSize->setEnabled(cursor || cdc);
    m_every->setEnabled(any || strategy != core::Strategy::Cdc);
    m_truncate->setEnabled(cdc);
    m_fallbackCursor->setEnabled(cdc && sourceKind == core::EndpointKind::Postgres);
    // A declared key names one table's columns: table_defaults has none.
    m_key->clear();
    m_key->setEnabled(false);
    m_key->setPlaceholderText(tr("per table only"));
    if (any) {
        m_every->setPlaceholderText(tr("each table's default"));
        m_sla->setPlaceholderText(tr("each table's default"));
    }
    m_fallbackNote->hide();
}

void TableSettingsPanel::apply(core::TableSpec &spec) const
{
    if (m_defaults) {
        const QString cursor = m_cursor->currentText().trimmed();
        spec.cursor = cursor.isEmpty() ? std::nullopt : std::optional<std::string>(cursor.toStdString());
    } else if (spec.strategy == core::Strategy::Cursor && m_cursor->currentIndex() >= 0) {
        spec.cursor = m_cursor->currentData().toString().toStdString();
    }
    const QString lookback = m_lookback->text().trimmed();
    if (lookback.isEmpty())
        spec.lookback.reset();
    else if (isCount(lookback) || core::parseDuration(lookback.toStdString()))
        spec.lookback = lookback.toStdString();
    if (const auto page = readCount(m_pageSize, tr("Page size"), 1, 1'000'000); page.problem.isEmpty())
        spec.pageSize = page.value;
    if (const auto every = readDuration(m_every, tr("Every"), core::Millis(1000)); every.problem.isEmpty())
        spec.every = every.value;
    if (const auto sla = readDuration(m_sla, tr("Freshness SLA"), core::Millis(1000)); sla.problem.isEmpty())
        spec.freshnessSla = sla.value;
    spec.truncate = choice(m_truncate);
    const QString fallback = m_fallbackCursor->currentText().trimmed();
    spec.fallbackCursor = fallback.isEmpty() ? std::nullopt : std::optional<std::string>(fallback.toStdString());
    spec.addColumn = choice(m_addColumn);
    spec.dropColumn = choice(m_dropColumn);
    spec.typeChange = choice(m_typeChange);
    spec.renameColumn = choice(m_renameColumn);
    spec.adopt = boolChoice(m_adopt);
    if (!m_defaults) {
        const QStringList key = keyColumns();
        if (key.isEmpty())
            spec.key.reset();
        else {
            spec.key.emplace();
            for (const QString &k : key)
                spec.key->push_back(k.toStdString());
        }
    }
}

QStringList TableSettingsPanel::keyColumns() const
{
    QStringList out;
    for (const QString &part : m_key->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (const QString k = part.trimmed(); !k.isEmpty())
            out << k;
    return out;
}

QString TableSettingsPanel::problem() const
{
    if (!m_included)
        return {};
    const QStringList key = keyColumns();
    for (int i = 0; i < key.size(); ++i)
        if (key.indexOf(key[i]) != i)
            return tr("Key columns name %1 twice.").arg(key[i]);
    const QString lookback = m_lookback->text().trimmed();
    if (m_lookback->isEnabled() && !lookback.isEmpty() && !isCount(lookback) &&
        !core::parseDuration(lookback.toStdString()))
        return tr("Lookback '%1' is neither a duration (10m) nor a count.").arg(lookback);
    if (m_pageSize->isEnabled())
        if (const auto page = readCount(m_pageSize, tr("Page size"), 1, 1'000'000); !page.problem.isEmpty())
            return page.problem;
    if (m_every->isEnabled())
        if (const auto every = readDuration(m_every, tr("Every"), core::Millis(1000)); !every.problem.isEmpty())
            return every.problem;
    if (const auto sla = readDuration(m_sla, tr("Freshness SLA"), core::Millis(1000)); !sla.problem.isEmpty())
        return tr("Freshness SLA '%1' is not a duration (90s, 10m, 1h).").arg(m_sla->text().trimmed());
    return {};
}

} // namespace driftless::ui
