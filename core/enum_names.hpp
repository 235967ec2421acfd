#pragma once
// The words of an enumeration, as one comma-separated list per enum in declaration order:
// to_string, parsing and the list of words all read it, so a new enumerator is one word.
//
// Contract: the enum's values are 0, 1, ... N-1 in declaration order (plain `enum class` without
// initialisers); the list must hold exactly N words, or the program does not compile. A value
// outside the list prints as "?"; a word not in it parses to nullopt.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace racktwin {

template <class E, std::size_t N>
class EnumWords {
 public:
  consteval explicit EnumWords(std::string_view list) {
    std::size_t at = 0, n = 0;
    for (std::size_t i = 0; i <= list.size(); ++i) {
      if (i < list.size() && list[i] != ',') continue;
      if (n >= N) throw "more words than enumerators";  // not a constant expression: no compile
      words_[n++] = list.substr(at, i - at);
      at = i + 1;
    }
    if (n != N) throw "fewer words than enumerators";
  }
  constexpr std::string_view name(E e) const {
    const auto i = static_cast<std::size_t>(e);
    return i < N ? words_[i] : std::string_view("?");
  }
  constexpr std::optional<E> parse(std::string_view s) const {
    for (std::size_t i = 0; i < N; ++i)
      if (words_[i] == s) return static_cast<E>(i);
    return std::nullopt;
  }
  std::vector<std::string> all() const { return {words_.begin(), words_.end()}; }

 private:
  std::array<std::string_view, N> words_{};
};

}  // namespace racktwin
