#pragma once

// The client subcommands of `allot`. Each Add* function adds its subcommands to `app`; when one
// of them is parsed, its callback stores in *run what to do, and main() runs it after parsing
// (inside one try/catch, so every CliError ends as "allot: <message>" and exit status 1).

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/client.h"
#include "server/options.h"

namespace allot::cli {

using Runner = std::function<int()>;

// argv with the "--" that separates `allot submit`'s options from its command removed: submit
// takes everything from its first non-option argument on as the command, and CLI11 would
// otherwise hand the arguments after "--" back to the parent command.
std::vector<char*> PrepareArgv(int argc, char** argv);

// --endpoint URL and --profile NAME on `sub`; the string --endpoint fills (empty = from the
// environment). --profile calls SetProfileFlag (cli/client.h).
std::shared_ptr<std::string> AddEndpointOption(CLI::App* sub);

void AddApplyCommand(CLI::App& app, Runner* run);   // apply
void AddDeleteCommand(CLI::App& app, Runner* run);  // delete (what apply made)
void AddJobCommands(CLI::App& app, Runner* run);    // submit, jobs, describe, priority, cancel
void AddSharesCommand(CLI::App& app, Runner* run);  // shares
void AddBenchCommand(CLI::App& app, Runner* run);   // bench submit
void AddLogsCommand(CLI::App& app, Runner* run);    // logs
void AddSimCommand(CLI::App& app, Runner* run);     // sim
void AddUsersCommand(CLI::App& app, Runner* run);   // users create|list|delete|keys|policy
void AddAuditCommand(CLI::App& app, Runner* run);   // audit

// explain, whatif submit|priority|share (explain_command.cc)
void AddExplainCommands(CLI::App& app, Runner* run);

// report, history export (report_command.cc)
void AddReportCommands(CLI::App& app, Runner* run);

// `allot server --host-map FILE`: {instance type: [{gpus: "0", cpus: "0-3"}, ...]}. Throws
// std::exception (with the reason) for a file it cannot read or that is not shaped so.
std::map<std::string, std::vector<server::Options::Slot>> ReadHostMap(const std::string& path);

}  // namespace allot::cli
