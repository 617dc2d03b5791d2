#include "cli/usage.h"

#include <algorithm>
#include <cstdio>

#include "common/strings.h"

namespace allot::cli {

namespace {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  }
  return names;
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

// The subcommand path the words name ("allot users keys"), following only known subcommand
// names; `stray` receives the first word where a subcommand was expected but none matched.
const CLI::App* Walk(const CLI::App& app, const std::vector<char*>& args, std::string* path,
                     std::string* stray) {
  const CLI::App* cur = &app;
  *path = "allot";
  for (std::size_t i = 1; i + 1 < args.size(); ++i) {
    const std::string_view word = args[i];
    if (word.starts_with("-")) continue;
    const std::vector<std::string> subs = SubcommandNames(*cur);
    if (subs.empty()) break;
    if (std::find(subs.begin(), subs.end(), word) == subs.end()) {
      *stray = std::string(word);
      break;
    }
    cur = cur->get_subcommand(std::string(word));
    *path += " " + std::string(word);
  }
  return cur;
}

// The first word of args that starts with "--" and is not an option of `app`.
std::string UnknownOption(const CLI::App& app, const std::vector<char*>& args) {
  const std::vector<std::string> known = OptionNames(app);
  for (std::size_t i = 1; i + 1 < args.size(); ++i) {
    std::string word = args[i];
    if (word == "--") break;
    if (!word.starts_with("--")) continue;
    word = word.substr(0, word.find('='));
    if (std::find(known.begin(), known.end(), word) == known.end()) return word;
  }
  return "";
}

}  // namespace

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty()) return "";
  const std::size_t allowed = std::max<std::size_t>(1, word.size() / 3);
  std::string best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (!best.empty()) return best;
  std::string prefixed;
  for (const std::string& c : candidates) {
    if (!c.starts_with(word)) continue;
    if (!prefixed.empty()) return "";  // ambiguous
    prefixed = c;
  }
  return prefixed;
}

std::optional<int> ParseCommandLine(CLI::App& app, std::vector<char*>& args) {
  try {
    app.parse(static_cast<int>(args.size() - 1), args.data());
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string path;
    std::string stray;
    const CLI::App* where = Walk(app, args, &path, &stray);
    std::string message = e.what();
    if (!stray.empty()) {
      message = "unknown command \"" + stray + "\"";
      const std::string hint = DidYouMean(stray, SubcommandNames(*where));
      if (!hint.empty()) message += "; did you mean \"" + hint + "\"?";
      message += " (commands: " + Join(SubcommandNames(*where), ", ") + ")";
    } else if (const std::string unknown = UnknownOption(*where, args); !unknown.empty()) {
      message = "unknown option " + unknown;
      const std::string hint = DidYouMean(unknown, OptionNames(*where));
      if (!hint.empty()) message += "; did you mean " + hint + "?";
    } else if (message == "A subcommand is required") {
      message = "a command is required: one of " + Join(SubcommandNames(*where), ", ");
    } else if (message.ends_with(" is required")) {
      message = "missing argument: " + message;
    }
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for its usage.\n", path.c_str(), message.c_str(),
                 path.c_str());
    return kExitUsage;
  }
}

}  // namespace allot::cli
