#pragma once
// A deterministic mutation engine for the loaders' fuzz tests. The same seed gives the same
// mutants, byte for byte, on every machine: the random numbers come from splitmix64 and are reduced
// by plain modulo, never through the standard library's distributions (whose output may differ
// between library versions).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace racktwin::fuzz {

// splitmix64 (Steele, Lea and Flood 2014): 64-bit state, every seed a full-period stream.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // A number in [0, n); n > 0. The modulo bias is below 2^-40 for the sizes used here.
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  // True once in `n` draws on average.
  bool one_in(std::size_t n) { return below(n) == 0; }

 private:
  std::uint64_t state_;
};

// The FNV-1a hash of `s`: seeds a target's stream from its name, so targets do not share mutants.
std::uint64_t hash_name(std::string_view s);

// One kind of change to an input.
enum class Mutation {
  flip_bit,         // one bit of one byte
  set_byte,         // one byte set to a random or a syntax-significant byte
  insert_bytes,     // 1-8 random bytes
  erase_bytes,      // a run of 1-64 bytes
  truncate,         // the input cut at a random byte
  splice_line,      // a line of another seed file in place of (or before) a line
  duplicate_line,   // a line repeated 1 to 20,000 times (the size limit applies)
  erase_line,       // a whole line
  swap_lines,       // two lines exchanged
  reindent,         // a line's indentation changed
  extreme_number,   // a number replaced by 1e308, -1, nan, 0, 2^64, ...
  syntax_token,     // a YAML or JSON token (anchor, alias, tag, '---', '{', ...) inserted
  dictionary_word,  // a word replaced by a word of the seeds (keys, ids, units)
  deep_nesting,     // a value replaced by lists or mappings nested 16 to 100,000 deep
  invalid_utf8,     // an invalid (or unusual) UTF-8 sequence inserted in a value
};
inline constexpr int kMutationCount = 15;
const char* to_string(Mutation m);

class Mutator {
 public:
  // `lines`: the lines other inputs may be spliced from; `words`: the dictionary of words;
  // `max_size`: a mutation that would make the input longer (in bytes) is not applied.
  Mutator(std::uint64_t seed, std::vector<std::string> lines, std::vector<std::string> words,
          std::size_t max_size = kDefaultMaxSize);

  static constexpr std::size_t kDefaultMaxSize = 256 << 10;

  // One to four stacked mutations of `input`.
  std::string mutate(const std::string& input);
  // Exactly the mutation `m` of `input` (the input unchanged when it has nothing to apply `m` to,
  // such as a number for extreme_number).
  std::string apply(Mutation m, const std::string& input);

  Rng& rng() { return rng_; }

 private:
  Rng rng_;
  std::vector<std::string> lines_;
  std::vector<std::string> words_;
  std::size_t max_size_;
};

// The lines of `text` (without their '\n').
std::vector<std::string> split_lines(std::string_view text);
// The words ([A-Za-z0-9_.%$/-]+ runs of 2 to 40 bytes) of `text`, each once, in order of first
// appearance.
std::vector<std::string> words_of(std::string_view text);

}  // namespace racktwin::fuzz
