#include "cli/format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string_view>

namespace allot::cli {

std::string EscapeControls(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string shown;
  shown.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0U;
    if (byte < 0x20 || byte == 0x7f) {
      shown += "\\x";
      shown += kHex[byte >> 4U];
      shown += kHex[byte & 15U];
    } else if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) {
      // U+0080..U+009F: some terminals take these as controls too (U+009B is a CSI).
      shown += "\\u00";
      shown += kHex[next >> 4U];
      shown += kHex[next & 15U];
      ++i;
    } else {
      shown += text[i];
    }
  }
  return shown;
}

void Table::Add(std::vector<std::string> row) {
  for (std::string& cell : row) cell = EscapeControls(cell);
  rows_.push_back(std::move(row));
}

void Table::Print(std::ostream& out) const {
  std::vector<std::size_t> width(header_.size(), 0);
  auto measure = [&width](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  print(header_);
  for (const auto& r : rows_) print(r);
}

std::string FormatTime(const nlohmann::json& epoch_millis) {
  if (!epoch_millis.is_number()) return "-";
  const auto ms = epoch_millis.get<std::int64_t>();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string FormatDuration(std::int64_t millis) {
  char buf[32];
  if (millis < 60'000) {
    std::snprintf(buf, sizeof(buf), "%.1fs", static_cast<double>(millis) / 1000.0);
  } else if (millis < 3'600'000) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", static_cast<long long>(millis / 60'000),
                  static_cast<long long>((millis / 1000) % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", static_cast<long long>(millis / 3'600'000),
                  static_cast<long long>((millis / 60'000) % 60));
  }
  return buf;
}

std::string FormatNumber(const nlohmann::json& n) {
  if (n.is_number_float()) {
    const double d = n.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 1e15) {
      return std::to_string(static_cast<long long>(d));
    }
    return n.dump();
  }
  if (n.is_number()) return n.dump();
  if (n.is_null()) return "-";
  return n.is_string() ? n.get<std::string>() : n.dump();
}

std::string ShellQuote(const std::string& arg) {
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
        return std::isalnum(c) != 0 ||
               std::string_view("-_./=:,+@%").find(static_cast<char>(c)) != std::string_view::npos;
      })) {
    return arg;
  }
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ShellJoin(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += (out.empty() ? "" : " ") + ShellQuote(a);
  return out;
}

std::string FormatCapacity(const nlohmann::json& list) {
  if (!list.is_array() || list.empty()) return "-";
  std::string out;
  for (const auto& u : list) {
    const auto& n =
        u.contains("quantity") ? u["quantity"] : u.value("maxCapacity", nlohmann::json());
    out += (out.empty() ? "" : ", ") + u.value("capacityUnit", std::string("?")) + " x " +
           FormatNumber(n);
  }
  return out;
}

}  // namespace allot::cli
