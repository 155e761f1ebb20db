// Reading optional members of a JSON document where absent means empty: documents from older
// gpucheck versions, other machines or hand-edited files lack fields, and a view shows a blank.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

// The member's string, or "" when obj lacks it or it is not a string.
inline std::string string_member(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The member, or an empty object when obj is not an object or lacks it.
inline const nlohmann::json& member_or_empty(const nlohmann::json& obj, std::string_view key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it == obj.end() ? kEmpty : *it;
}

// Sets obj[key] only when the value is known: an unknown fact is absent, not null.
template <typename T>
void put_if(nlohmann::json& obj, std::string_view key, const std::optional<T>& v) {
  if (v) obj[std::string(key)] = *v;
}

}  // namespace gpucheck
