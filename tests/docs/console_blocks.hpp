#pragma once
// Executable documentation: the ```console blocks of README.md and docs/*.md that run racktwin,
// their expected output, and the comparison of that output with what the binary prints.
//
// A block is a list of commands (lines starting "$ "), each followed by the lines it prints
// (standard output and standard error, merged). An expected line "..." matches any number of
// lines. Lines are compared after normalising what changes between builds and runs (git commit,
// ISO 8601 dates and times, process ids, host names, the block's temporary directory) and
// collapsing runs of blanks; numbers compare within a relative tolerance (1e-9 unless a
// "<!-- docs-test: numbers within X% ... -->" comment just before the block says otherwise).

#include <filesystem>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

namespace racktwin::docs {

// One "numbers within X%" clause: a relative tolerance, for every line of the block or only for
// expected lines that match `lines`.
struct ToleranceRule {
  double relative = 1e-9;
  std::optional<std::regex> lines;
  std::string pattern;  // the text of `lines`, for messages
};

struct Tolerances {
  double relative = 1e-9;  // the block's default
  std::vector<ToleranceRule> rules;

  // The tolerance of an expected line: the first rule whose pattern it matches, else the default.
  double for_line(const std::string& expected_line) const;
};

// Parses the body of "<!-- docs-test: ... -->" (clauses separated by ';'):
//   numbers within 50%                              the block's default
//   numbers within 100% on lines matching "REGEX"   lines of the expected output that match
// Text in parentheses after a clause is a comment. Throws std::invalid_argument on anything else.
Tolerances parse_directive(const std::string& body, Tolerances into = {});

struct Command {
  std::string text;                   // after "$ "
  std::vector<std::string> expected;  // the lines shown after it, up to the next command
};

struct Block {
  std::string file;  // relative to the source tree: "README.md", "docs/results.md"
  int index = 0;     // among the file's ```console blocks, from 0
  int line = 0;      // 1-based line of the opening fence
  std::vector<Command> commands;
  Tolerances tolerances;
  std::string error;  // a docs-test directive that could not be read

  // "README_md_3": the file with every character that is not a letter or digit as '_', and index.
  std::string name() const;
  // Whether any command runs racktwin ("build/cli/racktwin ..." or "racktwin ...").
  bool runs_racktwin() const;
};

// GoogleTest prints a block as its place: "docs/results.md:28".
void PrintTo(const Block& b, std::ostream* os);

// The ```console blocks of one Markdown text, in order.
std::vector<Block> parse_blocks(const std::string& markdown, const std::string& file);

// README.md and docs/*.md under `source_dir`, in that order (docs sorted by name).
std::vector<std::string> doc_files(const std::filesystem::path& source_dir);

// What changes between builds and runs, replaced by placeholders; `tmp_dir` (if not empty) is
// replaced by "<tmp>".
std::string normalise(const std::string& line, const std::string& tmp_dir = {});

// One expected line against one printed line (both raw; normalised here).
bool line_matches(const std::string& expected, const std::string& actual, double relative,
                  const std::string& tmp_dir = {});

struct Comparison {
  bool matches = false;
  std::string message;  // empty when it matches: where the output first departs from the block
};

// The expected lines (with "..." lines) against the printed lines. Trailing empty lines of both
// are ignored.
Comparison compare_output(const std::vector<std::string>& expected,
                          const std::vector<std::string>& actual, const Tolerances& tolerances,
                          const std::string& tmp_dir = {});

// The lines to write into a block for a command whose output changed: the printed lines, keeping
// the original's trims ("..." lines) where its parts can still be found in the output.
std::vector<std::string> retrim(const std::vector<std::string>& expected,
                                const std::vector<std::string>& actual);

// Replaces the body of block `index` in the Markdown text with `commands`; throws
// std::runtime_error when that block is missing or its commands are not the same.
std::string replace_block(const std::string& markdown, int index,
                          const std::vector<Command>& commands);

std::vector<std::string> split_lines(const std::string& text);

}  // namespace racktwin::docs
