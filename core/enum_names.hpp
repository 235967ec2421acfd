#pragma once
// The words of an enumeration, as one table per enum: to_string, parsing and the list of words all
// read it, so a new enumerator is one entry.
//
// Contract: constexpr lookups over a fixed table; a value missing from its table prints as "?",
// a word missing parses to nullopt.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace racktwin {

template <class E, std::size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

template <class E, std::size_t N>
constexpr std::string_view enum_name(E e, const EnumNames<E, N>& names) {
  for (const auto& [v, name] : names)
    if (v == e) return name;
  return "?";
}

template <class E, std::size_t N>
constexpr std::optional<E> enum_from_name(std::string_view s, const EnumNames<E, N>& names) {
  for (const auto& [v, name] : names)
    if (name == s) return v;
  return std::nullopt;
}

template <class E, std::size_t N>
std::vector<std::string> enum_words(const EnumNames<E, N>& names) {
  std::vector<std::string> out;
  for (const auto& [v, name] : names) out.emplace_back(name);
  return out;
}

}  // namespace racktwin
