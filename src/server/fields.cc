#include "server/fields.h"

#include "server/api_error.h"

namespace allot::server {

namespace {

std::string Quoted(const Json& v) { return v.dump(); }

std::string Allowed(std::initializer_list<std::string_view> allowed) {
  std::string s;
  for (std::string_view a : allowed) s += (s.empty() ? "" : ", ") + std::string(a);
  return s;
}

}  // namespace

Json ParseBody(std::string_view body) {
  if (body.empty()) return Json::object();
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) Refuse("the request body is not valid JSON");
  if (!j.is_object()) Refuse("the request body must be a JSON object");
  return j;
}

std::optional<std::string> OptionalString(const Json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) Refuse(std::string(field) + " must be a string, got " + Quoted(*it));
  return it->get<std::string>();
}

std::string RequireString(const Json& obj, const char* field) {
  std::optional<std::string> v = OptionalString(obj, field);
  if (!v) Refuse(std::string(field) + " is required");
  return *v;
}

std::optional<std::int64_t> OptionalInt(const Json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) {
    Refuse(std::string(field) + " must be an integer, got " + Quoted(*it));
  }
  return it->get<std::int64_t>();
}

std::int64_t RequireInt(const Json& obj, const char* field) {
  std::optional<std::int64_t> v = OptionalInt(obj, field);
  if (!v) Refuse(std::string(field) + " is required");
  return *v;
}

std::optional<std::string> OptionalEnum(const Json& obj, const char* field,
                                        std::initializer_list<std::string_view> allowed) {
  std::optional<std::string> v = OptionalString(obj, field);
  if (!v) return v;
  for (std::string_view a : allowed) {
    if (*v == a) return v;
  }
  Refuse(std::string(field) + " must be one of " + Allowed(allowed) + ", got \"" + *v + "\"");
}

std::string RequireEnum(const Json& obj, const char* field,
                        std::initializer_list<std::string_view> allowed) {
  std::optional<std::string> v = OptionalEnum(obj, field, allowed);
  if (!v) Refuse(std::string(field) + " is required (one of " + Allowed(allowed) + ")");
  return *v;
}

const Json* OptionalObject(const Json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_object()) Refuse(std::string(field) + " must be an object, got " + Quoted(*it));
  return &*it;
}

const Json* OptionalArray(const Json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_array()) Refuse(std::string(field) + " must be a list, got " + Quoted(*it));
  return &*it;
}

void RequireRange(std::int64_t value, const std::string& field, std::int64_t lo, std::int64_t hi) {
  if (value < lo || value > hi) {
    Refuse(field + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
           ", got " + std::to_string(value));
  }
}

void RequireName(const std::string& value, const std::string& field) {
  if (value.empty() || value.size() > 128) {
    Refuse(field + " must be 1 to 128 characters long, got " + std::to_string(value.size()));
  }
  for (char c : value) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) {
      Refuse(field + " may contain only letters, digits, hyphens and underscores, got \"" +
             value + "\"");
    }
  }
}

Json ReadTags(const Json& obj, const char* field) {
  const Json* tags = OptionalObject(obj, field);
  if (tags == nullptr) return Json::object();
  if (tags->size() > 50) Refuse(std::string(field) + " allows at most 50 tags");
  for (const auto& [k, v] : tags->items()) {
    if (k.empty() || k.size() > 128) Refuse("tag keys must be 1 to 128 characters, got \"" + k + "\"");
    if (!v.is_string()) Refuse("tag " + k + " must have a string value");
    if (v.get<std::string>().size() > 256) Refuse("tag " + k + " value exceeds 256 characters");
  }
  return *tags;
}

}  // namespace allot::server
