#include "ui/dialogs/patternsettingspanel.h"

#include "ui/dialogs/tablesettingspanel.h"
#include "ui/widgets/settingfields.h"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace driftless::ui {

using namespace settingfields;

namespace {
QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

std::vector<std::string> splitList(const QString &text)
{
    std::vector<std::string> out;
    for (const QString &part : text.split(QLatin1Char(',')))
        if (const QString name = part.trimmed(); !name.isEmpty())
            out.push_back(name.toStdString());
    return out;
}

QLabel *buddy(const QString &text, QWidget *field, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    label->setBuddy(field);
    return label;
}

} // namespace

std::vector<std::string> PatternSettingsPanel::splitPatterns(const QString &text)
{
    // A comma inside [...] belongs to the pattern (sales.[ab,]x); elsewhere it separates two.
    std::vector<std::string> out;
    QString part;
    int depth = 0;
    auto flush = [&] {
        if (const QString p = part.trimmed(); !p.isEmpty())
            out.push_back(p.toStdString());
        part.clear();
    };
    for (const QChar c : text) {
        if (c == QLatin1Char('['))
            ++depth;
        else if (c == QLatin1Char(']') && depth > 0)
            --depth;
        if (c == QLatin1Char(',') && depth == 0)
            flush();
        else
            part += c;
    }
    flush();
    return out;
}

QString PatternSettingsPanel::joinPatterns(const std::vector<std::string> &patterns)
{
    QStringList list;
    for (const auto &p : patterns)
        list << qs(p);
    return list.join(QStringLiteral(", "));
}

PatternSettingsPanel::PatternSettingsPanel(QWidget *parent)
    : QWidget(parent), m_include(new QLineEdit(this)), m_exclude(new QLineEdit(this)),
      m_discoverEvery(new QLineEdit(this)), m_strategy(new QComboBox(this)), m_defaults(new TableSettingsPanel(this)),
      m_deletes(new QComboBox(this)), m_where(new QLineEdit(this)), m_columns(new QLineEdit(this)),
      m_note(new QLabel(this))
{
    setObjectName(QStringLiteral("patternSettings"));
    m_include->setObjectName(QStringLiteral("includeTables"));
    m_include->setPlaceholderText(tr("none: only the listed tables (e.g. public.*, sales.order_*)"));
    m_include->setToolTip(tr("include_tables: schema.name patterns (MariaDB/MySQL: database.table), separated by "
                             "commas; * is any run of characters, ? one, [abc] one of them. The sync picks up the "
                             "tables they match at start and while it runs; a listed table wins over a pattern."));
    m_exclude->setObjectName(QStringLiteral("excludeTables"));
    m_exclude->setPlaceholderText(tr("none (e.g. public.tmp_*, public.*_old)"));
    m_exclude->setToolTip(tr("exclude_tables: names the patterns above never pick up (a listed table still syncs)"));
    m_discoverEvery->setObjectName(QStringLiteral("discoverEvery"));
    m_discoverEvery->setPlaceholderText(
        tr("%1 (default)").arg(qs(core::formatDuration(core::PipelineSpec::kDefaultDiscoverEvery))));
    m_discoverEvery->setToolTip(tr("discover_every: how often a running sync reads the source's catalog for new "
                                   "tables (at least 5s); it also looks at every start"));

    m_strategy->setObjectName(QStringLiteral("defaultStrategy"));
    m_strategy->addItem(tr("Recommended per table"), QVariant());
    m_strategy->addItem(tr("full refresh"), static_cast<int>(core::Strategy::FullRefresh));
    m_strategy->addItem(tr("cursor"), static_cast<int>(core::Strategy::Cursor));
    m_strategy->addItem(tr("CDC"), static_cast<int>(core::Strategy::Cdc));
    m_strategy->setToolTip(tr("Recommended per table: each table gets the strategy the editor would propose for it "
                              "when it is picked up (full refresh for a small quiet table or one without a key, "
                              "CDC for a busy one with deletes, cursor sync otherwise), and keeps it"));
    m_defaults->setObjectName(QStringLiteral("tableDefaults"));
    fillChoices(m_deletes, tr("default (hard)"),
                {QStringLiteral("hard"), QStringLiteral("soft"), QStringLiteral("ignore")});
    m_deletes->setObjectName(QStringLiteral("defaultDeletes"));
    m_deletes->setToolTip(tr("A row deleted at the source: hard deletes it on the target, soft keeps it with "
                             "_driftless_deleted_at set, ignore keeps it and logs the delete"));
    m_where->setObjectName(QStringLiteral("defaultWhere"));
    m_where->setPlaceholderText(tr("every row"));
    m_where->setToolTip(tr("where: a condition in the source's SQL every picked-up table is filtered by (e.g. "
                           "tenant_id = 42): every such table must have its columns"));
    m_columns->setObjectName(QStringLiteral("defaultExcludedColumns"));
    m_columns->setPlaceholderText(tr("none (e.g. ssn, password_hash)"));
    m_columns->setToolTip(tr("columns: { exclude: [...] }: columns left out of every picked-up table that has "
                             "them, separated by commas"));
    m_note->setObjectName(QStringLiteral("patternNote"));
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);

    auto *grid = new QGridLayout(this);
    grid->addWidget(buddy(tr("&Include tables:"), m_include, this), 0, 0);
    grid->addWidget(m_include, 0, 1, 1, 3);
    grid->addWidget(buddy(tr("E&xclude tables:"), m_exclude, this), 1, 0);
    grid->addWidget(m_exclude, 1, 1);
    grid->addWidget(buddy(tr("Look for new tables e&very:"), m_discoverEvery, this), 1, 2);
    grid->addWidget(m_discoverEvery, 1, 3);
    grid->addWidget(
        new QLabel(tr("<b>Table defaults</b>: what a table the patterns pick up gets (a listed table keeps its own)"),
                   this),
        2, 0, 1, 4);
    grid->addWidget(buddy(tr("&Strategy:"), m_strategy, this), 3, 0);
    grid->addWidget(m_strategy, 3, 1);
    grid->addWidget(buddy(tr("&Deletes:"), m_deletes, this), 3, 2);
    grid->addWidget(m_deletes, 3, 3);
    grid->addWidget(m_defaults, 4, 0, 1, 4);
    grid->addWidget(buddy(tr("&Row filter:"), m_where, this), 5, 0);
    grid->addWidget(m_where, 5, 1);
    grid->addWidget(buddy(tr("Leave out colu&mns:"), m_columns, this), 5, 2);
    grid->addWidget(m_columns, 5, 3);
    grid->addWidget(m_note, 6, 0, 1, 4);
    grid->setRowStretch(7, 1);
    grid->setColumnStretch(1, 3);
    grid->setColumnStretch(3, 2);

    for (QLineEdit *edit : {m_include, m_exclude, m_discoverEvery, m_where, m_columns})
        connect(edit, &QLineEdit::textChanged, this, &PatternSettingsPanel::settingsChanged);
    connect(m_deletes, &QComboBox::currentIndexChanged, this, &PatternSettingsPanel::settingsChanged);
    connect(m_strategy, &QComboBox::currentIndexChanged, this, [this] {
        // The fields that apply follow the strategy; what was typed stays.
        core::TableSpec keys = m_original ? m_original->keys : core::TableSpec{};
        m_defaults->apply(keys);
        const QVariant s = m_strategy->currentData();
        m_defaults->setDefaults(
            keys, s.isValid() ? std::optional(static_cast<core::Strategy>(s.toInt())) : std::nullopt, m_sourceKind);
        emit settingsChanged();
    });
    connect(m_defaults, &TableSettingsPanel::settingsChanged, this, &PatternSettingsPanel::settingsChanged);
    connect(m_include, &QLineEdit::textChanged, this, &PatternSettingsPanel::showNote);
    m_defaults->setDefaults({}, std::nullopt, m_sourceKind);
    showNote();
}

void PatternSettingsPanel::setPipeline(const core::PipelineSpec &p, core::EndpointKind sourceKind)
{
    const QSignalBlocker b1(m_include), b2(m_exclude), b3(m_discoverEvery), b4(m_strategy), b5(m_deletes), b6(m_where),
        b7(m_columns), b8(m_defaults);
    m_sourceKind = sourceKind;
    m_original = p.tableDefaults;
    m_include->setText(joinPatterns(p.includeTables));
    m_exclude->setText(joinPatterns(p.excludeTables));
    m_discoverEvery->setText(durationText(p.discoverEvery));
    const core::PipelineSpec::TableDefaults d = p.tableDefaults.value_or(core::PipelineSpec::TableDefaults{});
    m_strategy->setCurrentIndex(d.strategy ? m_strategy->findData(static_cast<int>(*d.strategy)) : 0);
    m_defaults->setDefaults(d.keys, d.strategy, sourceKind);
    setChoice(m_deletes, d.keys.deletes);
    m_where->setText(qs(d.keys.where.value_or(std::string())));
    QStringList excluded;
    if (d.keys.columns)
        for (const auto &c : d.keys.columns->exclude)
            excluded << qs(c);
    m_columns->setText(excluded.join(QStringLiteral(", ")));
    updateEnabled();
    showNote();
}

void PatternSettingsPanel::setSourceKind(core::EndpointKind sourceKind)
{
    m_sourceKind = sourceKind;
    core::TableSpec keys = m_original ? m_original->keys : core::TableSpec{};
    m_defaults->apply(keys);
    const QVariant s = m_strategy->currentData();
    m_defaults->setDefaults(keys, s.isValid() ? std::optional(static_cast<core::Strategy>(s.toInt())) : std::nullopt,
                            sourceKind);
    emit settingsChanged();
}

void PatternSettingsPanel::setPickedUp(std::size_t count)
{
    m_pickedUp = count;
    showNote();
}

void PatternSettingsPanel::updateEnabled()
{
    // An include mapping lists what reaches the target: there is nothing to leave out beside it.
    const bool include = m_original && m_original->keys.columns && m_original->keys.columns->hasInclude;
    m_columns->setEnabled(!include);
}

void PatternSettingsPanel::showNote()
{
    QStringList lines;
    if (m_pickedUp > 0)
        lines << (m_pickedUp == 1 ? tr("1 table picked up by these patterns so far: half-ticked in the list, its "
                                       "settings from the table defaults; tick it to list it with settings of its own.")
                                  : tr("%1 tables picked up by these patterns so far: half-ticked in the list, their "
                                       "settings from the table defaults; tick one to list it with settings of its "
                                       "own.")
                                        .arg(m_pickedUp));
    else if (hasPatterns())
        lines << tr("The sync picks up the tables these patterns match when it starts and every look after; they "
                    "are never written to the workspace file.");
    if (m_original && m_original->keys.columns) {
        const core::ColumnMapping &m = *m_original->keys.columns;
        if (m.hasInclude || !m.rename.empty() || !m.mask.empty())
            lines << tr("The table defaults' columns: mapping also includes, renames or masks columns (as the "
                        "workspace file says); kept as it is.");
    }
    m_note->setText(lines.join(QLatin1Char('\n')));
    m_note->setVisible(!lines.isEmpty());
}

bool PatternSettingsPanel::hasPatterns() const
{
    return !splitPatterns(m_include->text()).empty();
}

std::optional<core::PipelineSpec::TableDefaults> PatternSettingsPanel::defaults() const
{
    core::PipelineSpec::TableDefaults d;
    if (m_original)
        d.keys = m_original->keys;
    const QVariant s = m_strategy->currentData();
    if (s.isValid())
        d.strategy = static_cast<core::Strategy>(s.toInt());
    // As the loader reads it: the keys' strategy is the one named, else left at its default.
    d.keys.strategy = d.strategy.value_or(core::TableSpec{}.strategy);
    m_defaults->apply(d.keys);
    d.keys.deletes = choice(m_deletes);
    const QString where = m_where->text().trimmed();
    d.keys.where = where.isEmpty() ? std::nullopt : std::optional<std::string>(where.toStdString());
    if (m_columns->isEnabled()) {
        core::ColumnMapping m = d.keys.columns.value_or(core::ColumnMapping{});
        m.exclude = splitList(m_columns->text());
        d.keys.columns = m.empty() ? std::nullopt : std::optional(m);
    }
    // `table_defaults: {}` read from a file stays; no setting at all is no key.
    const core::PipelineSpec::TableDefaults none;
    if (d == none && !(m_original && *m_original == none))
        return std::nullopt;
    return d;
}

void PatternSettingsPanel::apply(core::PipelineSpec &p) const
{
    p.includeTables = splitPatterns(m_include->text());
    p.excludeTables = splitPatterns(m_exclude->text());
    p.discoverEvery = readDuration(m_discoverEvery, tr("Look for new tables every"), core::Millis(5'000)).value;
    p.tableDefaults = defaults();
}

QString PatternSettingsPanel::problem() const
{
    const auto include = splitPatterns(m_include->text());
    const auto exclude = splitPatterns(m_exclude->text());
    for (const auto &[key, patterns] : {std::pair{"include_tables", &include}, std::pair{"exclude_tables", &exclude}})
        for (const auto &p : *patterns)
            if (!core::PipelineSpec::isTablePattern(p))
                return tr("%1: '%2' is not a schema.name pattern; write e.g. public.* (* is any run of characters, "
                          "? one).")
                    .arg(QLatin1String(key), qs(p));
    if (include.empty()) {
        if (!exclude.empty())
            return tr("exclude_tables narrows include_tables, which this pipeline does not have; add include_tables "
                      "or remove it.");
        if (!m_discoverEvery->text().trimmed().isEmpty())
            return tr("discover_every applies to tables picked up by include_tables, which this pipeline does not "
                      "have; add include_tables or remove discover_every.");
        if (defaults())
            return tr("table_defaults applies to tables picked up by include_tables, which this pipeline does not "
                      "have; add include_tables or remove table_defaults (choose Recommended per table and empty "
                      "its fields).");
    }
    if (const auto every = readDuration(m_discoverEvery, tr("Look for new tables every"), core::Millis(5'000));
        !every.problem.isEmpty())
        return every.problem;
    if (const QString why = m_defaults->problem(); !why.isEmpty())
        return tr("Table defaults: %1").arg(why);
    if (m_strategy->currentData() == QVariant(static_cast<int>(core::Strategy::FullRefresh)) &&
        choice(m_deletes) == std::optional<std::string>("ignore"))
        return tr("Table defaults: a full refresh replaces the whole table, so it cannot keep deleted rows unmarked; "
                  "use deletes: soft (they stay, marked in _driftless_deleted_at), strategy cursor or cdc, or "
                  "deletes: hard.");
    return {};
}

} // namespace driftless::ui
