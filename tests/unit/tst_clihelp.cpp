// The help a DBA reads without the README: each command's own help, the version, the man pages
// and the shell completions, all from one text, checked by the tools that read them (groff, bash,
// zsh) rather than by string matching alone.

#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

using namespace driftless::test;

namespace {

struct Shell {
    int exitCode = -1;
    std::string out;
    std::string err;
};

/// Runs `command` under sh, its output and errors kept apart.
Shell sh(const std::string &command, const TempDir &dir)
{
    const std::string out = dir.file("sh.out"), err = dir.file("sh.err");
    const int status = std::system((command + " >" + out + " 2>" + err).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, readFile(out), readFile(err)};
}

std::string quote(const std::string &s)
{
    return "'" + s + "'";
}

std::vector<std::string> lines(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        if (!l.empty())
            out.push_back(l);
    return out;
}

std::vector<std::string> commands()
{
    auto r = runCli({"__complete", "commands"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return lines(r.out);
}

/// A workspace stored without touching a server (apply --no-check).
std::string workspace(const TempDir &dir)
{
    const std::string yaml = dir.file("ws.yaml"), state = dir.file("workspace.db");
    writeFile(yaml, "endpoints:\n"
                    "  app: { kind: postgres, dsn: \"host=127.0.0.1 port=1 dbname=app user=sync\" }\n"
                    "  lite: { kind: sqlite, path: \"replica.db\" }\n"
                    "pipelines:\n"
                    "  - name: app_to_lite\n"
                    "    source: app\n"
                    "    target: lite\n"
                    "    tables:\n"
                    "      - { table: public.plans, strategy: full_refresh }\n"
                    "      - { table: public.orders, strategy: cursor }\n"
                    "  - name: app_archive\n"
                    "    source: app\n"
                    "    target: lite\n"
                    "    tables:\n"
                    "      - { table: public.events, strategy: full_refresh, target_table: archived_events }\n");
    auto r = runCli({"--state", state, "apply", yaml, "--no-check"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return state;
}

/// What bash completes for the words `line` (the last one being typed, maybe empty).
std::vector<std::string> bashComplete(const TempDir &dir, const std::vector<std::string> &line)
{
    std::string words;
    for (const auto &w : line)
        words += quote(w) + " ";
    const std::string script = dir.file("completion.bash");
    writeFile(script, runCli({"completion", "bash"}).out);
    const std::string cliDir = std::filesystem::path(cliPath()).parent_path().string();
    auto r = sh("PATH=" + quote(cliDir) + ":\"$PATH\" bash -c " +
                    quote("source " + script + "; COMP_WORDS=(" + words + "); COMP_CWORD=" +
                          std::to_string(line.size() - 1) + "; _driftless_cli; printf \"%s\\n\" \"${COMPREPLY[@]}\""),
                dir);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err, "");
    auto out = lines(r.out);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST(CliHelp, everyCommandHasItsOwnHelpAndBothSpellingsSayTheSame)
{
    const auto names = commands();
    ASSERT_GE(names.size(), 18u);
    const auto overview = runCli({"help"});
    ASSERT_EQ(overview.exitCode, 0) << overview.err;
    EXPECT_EQ(runCli({"--help"}).out, overview.out);
    for (const auto &name : names) {
        EXPECT_NE(overview.out.find("\n  " + name + " "), std::string::npos) << name << " missing from the overview";
        auto help = runCli({"help", name});
        auto flag = runCli({name, "--help"});
        EXPECT_EQ(help.exitCode, 0) << name << ": " << help.err;
        EXPECT_EQ(flag.exitCode, 0) << name << ": " << flag.err;
        EXPECT_EQ(help.out, flag.out) << name;
        EXPECT_EQ(help.out.rfind("usage: driftless-cli [--state FILE] " + name, 0), 0u) << help.out;
        EXPECT_NE(help.out.find("exit codes:"), std::string::npos) << name;
        for (const auto &l : lines(help.out))
            EXPECT_LE(l.size(), 100u) << name << ": a line past 100 columns: " << l;
    }
    // The options a command takes are in its help.
    const auto reconcile = runCli({"reconcile", "-h"}).out;
    for (const char *opt : {"--json", "--max-keys N", "--settle DURATION"})
        EXPECT_NE(reconcile.find(opt), std::string::npos) << opt;
    EXPECT_NE(runCli({"help", "rebackfill"}).out.find("usage: driftless-cli [--state FILE] backfill"),
              std::string::npos)
        << "an alias shows its command's help";

    auto unknown = runCli({"help", "reconsile"});
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_NE(unknown.err.find("no command 'reconsile'"), std::string::npos) << unknown.err;
    auto bare = runCli({});
    EXPECT_EQ(bare.exitCode, 2);
    EXPECT_EQ(bare.err, overview.out) << "no command: the overview, on stderr";
}

TEST(CliHelp, bothFacesShowTheVersionCMakeBuilt)
{
    EXPECT_EQ(runCli({"--version"}).out, std::string("driftless-cli ") + DRIFTLESS_VERSION + "\n");
    EXPECT_EQ(runCli({"version"}).out, std::string("driftless-cli ") + DRIFTLESS_VERSION + "\n");
#ifdef DRIFTLESS_APP_PATH
    TempDir dir;
    auto app = sh(std::string("QT_QPA_PLATFORM=offscreen ") + DRIFTLESS_APP_PATH + " --version", dir);
    EXPECT_EQ(app.exitCode, 0) << app.err;
    EXPECT_EQ(app.out, std::string("Driftless ") + DRIFTLESS_VERSION + "\n");
#endif
}

TEST(CliHelp, theManPagesRenderWithoutAWarningAndCoverEveryCommand)
{
    TempDir dir;
    const std::string page = dir.file("driftless-cli.1");
    auto man = runCli({"help", "--man"});
    ASSERT_EQ(man.exitCode, 0) << man.err;
    writeFile(page, man.out);
    // -ww: every warning; -z: no output, only the check.
    auto check = sh("groff -man -Tutf8 -ww -z " + page, dir);
    EXPECT_EQ(check.exitCode, 0) << check.err;
    EXPECT_EQ(check.err, "") << "groff warned about driftless-cli(1)";
    auto text = sh("groff -man -Tutf8 -P-cbou " + page, dir);
    ASSERT_EQ(text.exitCode, 0) << text.err;
    for (const auto &name : commands())
        EXPECT_NE(text.out.find("   " + name), std::string::npos) << name << " missing from the man page";
    EXPECT_NE(text.out.find("--max-keys"), std::string::npos) << "options keep their dashes";
#ifdef DRIFTLESS_APP_PATH
    const std::string appPage = dir.file("driftless.1");
    auto appMan =
        sh(std::string(DRIFTLESS_APP_PATH) + " --man > " + appPage + " && groff -man -Tutf8 -ww -z " + appPage, dir);
    EXPECT_EQ(appMan.exitCode, 0) << appMan.err;
    EXPECT_EQ(appMan.err, "") << "groff warned about driftless(1)";
    EXPECT_NE(readFile(appPage).find("state"), std::string::npos);
#endif
}

TEST(CliHelp, bashCompletesCommandsOptionsAndTheWorkspacesNames)
{
    TempDir dir;
    const std::string state = workspace(dir);
    using V = std::vector<std::string>;
    EXPECT_EQ(bashComplete(dir, {"driftless-cli", "re"}),
              (V{"reconcile", "recover", "repair", "report", "reports", "resnapshot", "resolve", "resume"}));
    EXPECT_EQ(bashComplete(dir, {"driftless-cli", "--state", state, "pause", ""}), (V{"app_archive", "app_to_lite"}));
    EXPECT_EQ(bashComplete(dir, {"driftless-cli", "--state", state, "pause", "app_to_lite", ""}),
              (V{"public.orders", "public.plans"}));
    EXPECT_EQ(bashComplete(dir, {"driftless-cli", "--state", state, "backfill", "--cancel", "app_archive", "public."}),
              (V{"public.events"}));
    const auto opts = bashComplete(dir, {"driftless-cli", "reconcile", "--"});
    EXPECT_EQ(opts, (V{"--help", "--json", "--max-keys", "--settle"}));
    EXPECT_EQ(bashComplete(dir, {"driftless-cli", "completion", ""}), (V{"bash", "zsh"}));
    // No workspace: nothing to complete, and nothing said.
    EXPECT_EQ(bashComplete(dir, {"driftless-cli", "--state", dir.file("none.db"), "pause", ""}), V{});
    EXPECT_FALSE(std::filesystem::exists(dir.file("none.db"))) << "completion created a workspace";
}

TEST(CliHelp, theZshCompletionIsAValidScriptForCompdef)
{
    TempDir dir;
    const std::string script = dir.file("_driftless-cli");
    auto r = runCli({"completion", "zsh"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.rfind("#compdef driftless-cli\n", 0), 0u);
    writeFile(script, r.out);
    auto check = sh("zsh -n " + script, dir);
    EXPECT_EQ(check.exitCode, 0) << check.err;
    EXPECT_EQ(check.err, "");
    auto other = runCli({"completion", "fish"});
    EXPECT_EQ(other.exitCode, 2);
    EXPECT_NE(other.err.find("bash or zsh"), std::string::npos) << other.err;
}
