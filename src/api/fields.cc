#include "api/fields.h"

#include <limits>

#include "api/query.h"
#include "api/wire_error.h"
#include "api/wire_json.h"
#include "common/strings.h"
#include "model/rules.h"

namespace allot::api {

namespace {

constexpr std::size_t kQuoteChars = 64;

std::string PathOf(const char* field, const std::string& path) {
  return path.empty() ? std::string(field) : path;
}

}  // namespace

std::string Quoted(const Json& value) { return QuoteForMessage(value, kQuoteChars); }

Result<Json> ReadBody(std::string_view body, std::string_view what) {
  if (body.empty() && what == kRequestBody) return Json::object();
  Result<Json> parsed = ParseWireJson(body, what);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->is_object()) return InvalidArgument(std::string(what) + " must be a JSON object");
  return parsed;
}

Json ParseBody(std::string_view body, std::string_view what) {
  Result<Json> parsed = ReadBody(body, what);
  if (!parsed.ok()) Refuse(parsed.status().message());
  return std::move(parsed).value();
}

std::optional<std::string> OptionalString(const Json& obj, const char* field,
                                          const std::string& path) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) Refuse(PathOf(field, path) + " must be a string, got " + Quoted(*it));
  return it->get<std::string>();
}

std::string RequireString(const Json& obj, const char* field, const std::string& path) {
  std::optional<std::string> v = OptionalString(obj, field, path);
  if (!v) Refuse(PathOf(field, path) + " is required");
  return *v;
}

std::optional<std::int64_t> OptionalInt(const Json& obj, const char* field, std::int64_t lo,
                                        std::int64_t hi, const std::string& path) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  const std::string name = PathOf(field, path);
  const std::string range =
      " must be an integer between " + std::to_string(lo) + " and " + std::to_string(hi);
  if (!it->is_number_integer()) Refuse(name + range + ", got " + Quoted(*it));
  // A number above 2^63-1 arrives unsigned: reading it as int64 would wrap.
  if (it->is_number_unsigned() &&
      it->get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    Refuse(name + range + ", got " + Quoted(*it));
  }
  const std::int64_t value = it->get<std::int64_t>();
  if (value < lo || value > hi) Refuse(name + range + ", got " + std::to_string(value));
  return value;
}

std::int64_t RequireInt(const Json& obj, const char* field, std::int64_t lo, std::int64_t hi,
                        const std::string& path) {
  std::optional<std::int64_t> v = OptionalInt(obj, field, lo, hi, path);
  if (!v) Refuse(PathOf(field, path) + " is required");
  return *v;
}

std::optional<std::string> OptionalEnum(const Json& obj, const char* field,
                                        std::initializer_list<std::string_view> allowed,
                                        const std::string& path) {
  std::optional<std::string> v = OptionalString(obj, field, path);
  if (!v) return v;
  for (std::string_view a : allowed) {
    if (*v == a) return v;
  }
  Refuse(PathOf(field, path) + " must be one of " + Join(allowed, ", ") + ", got " + Quoted(*v));
}

std::string RequireEnum(const Json& obj, const char* field,
                        std::initializer_list<std::string_view> allowed, const std::string& path) {
  std::optional<std::string> v = OptionalEnum(obj, field, allowed, path);
  if (!v) Refuse(PathOf(field, path) + " is required (one of " + Join(allowed, ", ") + ")");
  return *v;
}

const Json* OptionalObject(const Json& obj, const char* field, const std::string& path) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_object()) Refuse(PathOf(field, path) + " must be an object, got " + Quoted(*it));
  return &*it;
}

const Json* OptionalArray(const Json& obj, const char* field, const std::string& path) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_array()) Refuse(PathOf(field, path) + " must be a list, got " + Quoted(*it));
  return &*it;
}

std::vector<std::string> OptionalStringList(const Json& obj, const char* field,
                                            std::size_t max_items, const std::string& path) {
  std::vector<std::string> out;
  const Json* list = OptionalArray(obj, field, path);
  if (list == nullptr) return out;
  const std::string name = PathOf(field, path);
  if (list->size() > max_items) {
    Refuse(name + " allows at most " + std::to_string(max_items) + " entries, got " +
           std::to_string(list->size()));
  }
  for (const Json& v : *list) {
    if (!v.is_string()) Refuse(name + " must be a list of strings, got " + Quoted(v));
    out.push_back(v.get<std::string>());
  }
  return out;
}

void RequireObjects(const Json& list, const std::string& path) {
  for (const Json& item : list) {
    if (!item.is_object()) Refuse(path + " entries must be objects, got " + Quoted(item));
  }
}

void RefuseUnless(const Status& status) {
  if (!status.ok()) Refuse(status.message());
}

void RequireLength(std::string_view text, std::string_view what, std::size_t min, std::size_t max) {
  const std::size_t length = CodePoints(text);
  if (length >= min && length <= max) return;
  const std::string allowed = min == 0 ? "at most " + std::to_string(max)
                                       : std::to_string(min) + " to " + std::to_string(max);
  Refuse(std::string(what) + " must be " + allowed + " characters, got " + std::to_string(length));
}

// AWS reserves the prefix for its own tags: a caller may neither set nor remove one.
void RefuseReservedTagKey(const std::string& key, const std::string& what) {
  if (EqualsIgnoreCase(key.substr(0, 4), "aws:")) {
    Refuse(what + " must not begin with \"aws:\", which is reserved for AWS use; got " +
           Quoted(Json(key)));
  }
}

Json ReadTags(const Json& obj, const char* field) {
  const Json* tags = OptionalObject(obj, field);
  if (tags == nullptr) return Json::object();
  if (tags->empty()) Refuse(std::string(field) + " must hold 1 to 50 tags, or be left out");
  if (tags->size() > 50) Refuse(std::string(field) + " allows at most 50 tags");
  // The body was checked as UTF-8 (ReadBody), so characters can be counted.
  for (const auto& [k, v] : tags->items()) {
    RequireLength(k, std::string(field) + " keys", 1, model::rules::kMaxTagKeyLength);
    RefuseReservedTagKey(k, std::string(field) + " keys");
    if (!v.is_string()) Refuse(std::string(field) + "." + k + " must be a string");
    RequireLength(v.get_ref<const std::string&>(), std::string(field) + "." + k, 0,
                  model::rules::kMaxTagValueLength);
  }
  return *tags;
}

}  // namespace allot::api
