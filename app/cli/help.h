#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace driftless::cli {

/// One option of a command, as its help, man page and completion show it.
struct OptionHelp {
    std::string_view flag; ///< e.g. "--max-keys N"
    std::string_view text;
};

/// What `driftless-cli help COMMAND` (and `COMMAND --help`) says of a command. The overview,
/// each command's help, the man page and the shell completions are all made from these, so they
/// cannot disagree.
struct CommandHelp {
    std::string_view name;
    std::string_view synopsis; ///< its arguments, after `driftless-cli [--state FILE] NAME`
    std::string_view summary;  ///< one line, for the overview
    std::string_view details;  ///< what it does, in paragraphs separated by blank lines
    std::vector<OptionHelp> options;
    std::vector<std::string_view> aliases;
    /// What its first positional arguments name, for completion: "pipeline", "pipeline tables",
    /// "file", "shell", "command", or empty.
    std::string_view completes;
};

const std::vector<CommandHelp> &commandHelps();
/// The command named (or aliased) `name`, or nullptr.
const CommandHelp *findCommandHelp(std::string_view name);

/// `driftless-cli --help`: the usage, one line per command, the exit codes.
std::string overviewText();
/// `driftless-cli help NAME`: the usage line, the details and the options, wrapped to 100 columns.
std::string commandHelpText(const CommandHelp &command);
/// The man page driftless-cli(1), in groff's man macros.
std::string manPage(std::string_view version);
/// The completion script for `shell` ("bash" or "zsh"); empty for another shell.
std::string completionScript(std::string_view shell);

} // namespace driftless::cli
