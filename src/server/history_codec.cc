#include "server/history_codec.h"

#include <charconv>
#include <map>
#include <string_view>

#include "common/strings.h"

namespace allot::server {

namespace {

std::string MillisKey(Timestamp at) {
  return ZeroPadded(static_cast<std::uint64_t>(at < 0 ? 0 : at), 13);
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// Shortest text that reads back as the same double.
void AppendDouble(std::string& out, double value) {
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, ec == std::errc() ? ptr : buf);
}

// Values may hold any byte but tab, newline and backslash, which are escaped.
void AppendEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

std::string Unescaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[++i];
    out += next == 't' ? '\t' : next == 'n' ? '\n' : next;
  }
  return out;
}

constexpr std::string_view kEventNames[] = {"submitted", "dispatched", "started", "attempt-ended",
                                            "preempted", "priority",   "ended"};

}  // namespace

std::string UsageSampleKey(UsageResolution resolution, Timestamp at, const std::string& queue) {
  return UsageSampleBound(resolution, at) + "/" + queue;
}

std::string UsageSampleBound(UsageResolution resolution, Timestamp at) {
  return std::to_string(static_cast<int>(resolution)) + "/" + MillisKey(at);
}

std::string EncodeUsageSample(const UsageSample& sample) {
  std::string out;
  for (const UsagePoint& p : sample.points) {
    out += p.share;
    out += '\t';
    out += p.unit;
    for (double v : {p.limit, p.used, p.borrowed, p.lent, p.waiting}) {
      out += '\t';
      AppendDouble(out, v);
    }
    out += '\n';
  }
  return out;
}

Result<UsageSample> DecodeUsageSample(const std::string& key, const std::string& value) {
  const std::vector<std::string_view> parts = Split(key, '/');
  UsageSample s;
  int resolution = 0;
  if (parts.size() < 3 || !ParseNumber(parts[0], &resolution) || resolution < 0 || resolution > 2 ||
      !ParseNumber(parts[1], &s.at)) {
    return Internal("a usage sample's key is not one this server writes: " + key);
  }
  s.resolution = static_cast<UsageResolution>(resolution);
  s.queue = key.substr(parts[0].size() + parts[1].size() + 2);
  for (std::string_view line : Split(value, '\n')) {
    if (line.empty()) continue;
    const std::vector<std::string_view> f = Split(line, '\t');
    UsagePoint p;
    if (f.size() != 7 || !ParseNumber(f[2], &p.limit) || !ParseNumber(f[3], &p.used) ||
        !ParseNumber(f[4], &p.borrowed) || !ParseNumber(f[5], &p.lent) ||
        !ParseNumber(f[6], &p.waiting)) {
      return Internal("the usage sample " + key + " holds a line this server does not write");
    }
    p.share = std::string(f[0]);
    p.unit = std::string(f[1]);
    s.points.push_back(std::move(p));
  }
  return s;
}

std::string_view ToString(JobEventType type) { return kEventNames[static_cast<int>(type)]; }

std::int64_t JobEvent::Instances() const {
  std::int64_t n = 0;
  for (const auto& [unit, count] : demand) n += count;
  return n;
}

std::string JobEventKey(Timestamp at, std::uint64_t sequence) {
  return MillisKey(at) + "/" + ZeroPadded(sequence, 12);
}

std::string JobEventBound(Timestamp at) { return MillisKey(at); }

std::optional<std::uint64_t> JobEventSequence(const std::string& key) {
  const std::string_view k = key;
  const auto slash = k.find('/');
  std::uint64_t seq = 0;
  if (slash == std::string_view::npos || !ParseNumber(k.substr(slash + 1), &seq)) {
    return std::nullopt;
  }
  return seq;
}

// Fields left at their default are not written; the order is fixed.
std::string EncodeJobEvent(const JobEvent& e) {
  std::string out(ToString(e.type));
  auto text = [&out](const char* name, std::string_view value) {
    if (value.empty()) return;
    out += '\t';
    out += name;
    out += '=';
    AppendEscaped(out, value);
  };
  auto number = [&out](const char* name, std::int64_t value) {
    if (value == 0) return;
    out += '\t';
    out += name;
    out += '=';
    out += std::to_string(value);
  };
  text("job", e.job);
  text("name", e.name);
  text("queue", e.queue);
  text("share", e.share);
  std::string demand;
  for (const auto& [unit, count] : e.demand) {
    if (!demand.empty()) demand += ',';
    demand += unit + ":" + std::to_string(count);
  }
  text("demand", demand);
  number("priority", e.priority);
  number("attempt", e.attempt);
  number("created", e.created_at);
  number("dispatched", e.dispatched_at);
  text("reason", e.reason);
  text("status", e.status);
  text("hosts", e.hosts);
  number("old", e.old_priority);
  text("by", e.by);
  text("preemptor", e.preemptor);
  text("preemptorShare", e.preemptor_share);
  text("rule", e.rule);
  number("victimPriority", e.victim_priority);
  number("lostWhenChosen", e.work_lost_when_chosen);
  number("chosen", e.chosen_at);
  number("lost", e.work_lost);
  return out;
}

Result<JobEvent> DecodeJobEvent(const std::string& key, const std::string& value) {
  JobEvent e;
  const auto bad = [&key](const std::string& why) {
    return Internal("the job event " + key + " is not one this server writes: " + why);
  };
  const std::string_view k = key;
  if (!ParseNumber(k.substr(0, k.find('/')), &e.at)) return bad("key");
  const std::vector<std::string_view> fields = Split(value, '\t');
  bool known = false;
  for (std::size_t i = 0; i < std::size(kEventNames); ++i) {
    if (fields[0] == kEventNames[i]) {
      e.type = static_cast<JobEventType>(i);
      known = true;
    }
  }
  if (!known) return bad("type " + std::string(fields[0]));
  const std::map<std::string_view, std::string*> texts = {{"job", &e.job},
                                                          {"name", &e.name},
                                                          {"queue", &e.queue},
                                                          {"share", &e.share},
                                                          {"reason", &e.reason},
                                                          {"status", &e.status},
                                                          {"hosts", &e.hosts},
                                                          {"by", &e.by},
                                                          {"preemptor", &e.preemptor},
                                                          {"rule", &e.rule},
                                                          {"preemptorShare", &e.preemptor_share}};
  const std::map<std::string_view, std::int64_t*> numbers = {
      {"created", &e.created_at},
      {"dispatched", &e.dispatched_at},
      {"chosen", &e.chosen_at},
      {"lostWhenChosen", &e.work_lost_when_chosen},
      {"lost", &e.work_lost}};
  const std::map<std::string_view, std::int32_t*> smalls = {{"priority", &e.priority},
                                                            {"attempt", &e.attempt},
                                                            {"old", &e.old_priority},
                                                            {"victimPriority", &e.victim_priority}};
  for (std::size_t i = 1; i < fields.size(); ++i) {
    const auto eq = fields[i].find('=');
    if (eq == std::string_view::npos) return bad("field " + std::string(fields[i]));
    const std::string_view name = fields[i].substr(0, eq);
    const std::string_view text = fields[i].substr(eq + 1);
    if (auto t = texts.find(name); t != texts.end()) {
      *t->second = Unescaped(text);
    } else if (auto n = numbers.find(name); n != numbers.end()) {
      if (!ParseNumber(text, n->second)) return bad(std::string(name));
    } else if (auto s = smalls.find(name); s != smalls.end()) {
      if (!ParseNumber(text, s->second)) return bad(std::string(name));
    } else if (name == "demand") {
      const std::string list = Unescaped(text);
      for (std::string_view item : Split(list, ',')) {
        const auto colon = item.rfind(':');
        std::int64_t count = 0;
        if (colon == std::string_view::npos || !ParseNumber(item.substr(colon + 1), &count)) {
          return bad("demand");
        }
        e.demand.emplace_back(std::string(item.substr(0, colon)), count);
      }
    }
    // An unknown field is one a later version added: ignored, so history reads back.
  }
  return e;
}

}  // namespace allot::server
