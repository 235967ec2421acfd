// Executable documentation: every ```console block of README.md and docs/*.md that runs racktwin
// is run in a fresh directory and its output compared with what the block shows
// (tests/docs/console_blocks.hpp gives the rules). With RACKTWIN_DOCS_UPDATE=1 a block whose output
// changed is rewritten in its file from what the binary printed; review the diff.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <regex>
#include <string>
#include <vector>

#include "console_blocks.hpp"
#include "tests/shared_output.hpp"

namespace fs = std::filesystem;
using namespace racktwin::docs;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == value;
}

// Every console block of the shipped docs that runs racktwin; read when the test starts, so that
// CTest lists one test per block.
std::vector<Block> runnable_blocks() {
  std::vector<Block> out;
  for (const auto& file : doc_files(RACKTWIN_SOURCE_DIR)) {
    for (auto& b : parse_blocks(read_file(fs::path(RACKTWIN_SOURCE_DIR) / file), file))
      if (b.runs_racktwin() || !b.error.empty()) out.push_back(std::move(b));
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Ran {
  int exit_code = -1;
  std::vector<std::string> lines;
  double seconds = 0;
};

// One command line of a block, with bash in `dir`, standard error merged into standard output;
// `$?` is the previous command's exit code, as in an interactive shell. Standard output is
// line-buffered as on a terminal (stdbuf -oL), so that what a command writes to standard error
// lands where a reader of the terminal sees it.
Ran run_command(const fs::path& dir, const std::string& text, int previous_exit_code) {
  const std::string script = "(exit " + std::to_string(previous_exit_code) + "); " + text;
  const std::string cmd = "cd " + shell_quote(dir.string()) + " && stdbuf -oL bash -c " +
                          shell_quote(script) + " 2>&1 </dev/null";
  const auto t0 = std::chrono::steady_clock::now();
  Ran r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::string out;
  std::array<char, 65536> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.lines = split_lines(out);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// The first command of a block runs in a fresh directory, so what it prints and the files it
// leaves follow from its text and the binaries alone. A simulation that several blocks start with
// (the default scenario's sweep: four blocks) runs once per CTest run: the first block to need it
// runs it, and the others take its output and files (SharedOutput).
bool replayable(const Command& c) {
  static const std::regex run(R"(^(build/cli/)?racktwin run [^|;&<>]*(> /dev/null)?$)");
  return std::regex_match(c.text, run);
}

// The regular files under `from`, to the same places under `to`; links are neither followed nor
// copied (the checkout's directories and binaries in a working directory are links).
void copy_tree(const fs::path& from, const fs::path& to) {
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (e.is_symlink() || !e.is_regular_file()) continue;
    const fs::path dest = to / fs::relative(e.path(), from);
    fs::create_directories(dest.parent_path());
    fs::copy_file(e.path(), dest, fs::copy_options::overwrite_existing);
  }
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

// `c`, the first command of a block, in the fresh directory `dir`: run, or replayed from the block
// of this CTest run that ran it first (its printed lines with its directory's name made this one's,
// its exit code, and every regular file it left outside the checkout's links).
Ran first_command(const racktwin::test::SharedOutput& shared, const fs::path& dir,
                  const Command& c) {
  const std::string key = std::to_string(std::hash<std::string>{}(c.text));
  const fs::path made = shared.once(key, [&](const fs::path& partial) {
    const Ran r = run_command(dir, c.text, 0);
    fs::create_directories(partial / "files");
    copy_tree(dir, partial / "files");
    std::ofstream out(partial / "printed");
    out << r.exit_code << "\n" << dir.string() << "\n" << r.seconds << "\n";
    for (const auto& l : r.lines) out << l << "\n";
  });
  Ran r;
  std::ifstream in(made / "printed");
  std::string line, ran_in, seconds;
  if (!std::getline(in, line) || !std::getline(in, ran_in) || !std::getline(in, seconds))
    return r;  // not made: the block fails on its output
  r.exit_code = std::stoi(line);
  r.seconds = std::stod(seconds);
  while (std::getline(in, line)) r.lines.push_back(replace_all(line, ran_in, dir.string()));
  copy_tree(made / "files", dir);
  return r;
}

// A fresh directory laid out like a checkout with a build: scenarios/, tests/ and docs/ of the
// source tree, and build/cli/racktwin with its workers (as symlinks). `racktwin` on PATH is the
// same binary.
struct Workdir {
  fs::path dir;
  Workdir() {
    std::string tmpl = (fs::temp_directory_path() / "racktwin-docs-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
    const fs::path src = RACKTWIN_SOURCE_DIR;
    for (const char* d : {"scenarios", "tests", "docs"})
      fs::create_directory_symlink(src / d, dir / d);
    fs::create_directories(dir / "build/cli");
    fs::create_directories(dir / "build/worker");
    fs::create_symlink(RACKTWIN_BIN, dir / "build/cli/racktwin");
    fs::create_symlink(RACKTWIN_SIM_BIN, dir / "build/worker/racktwin-sim");
    fs::create_symlink(RACKTWIN_SIM_MPI_BIN, dir / "build/worker/racktwin-sim-mpi");
  }
  ~Workdir() {
    if (env_is("RACKTWIN_DOCS_KEEP", "1")) {
      std::cout << "kept " << dir << "\n";
      return;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

void set_environment(const fs::path& dir) {
  ::unsetenv("RACKTWIN_DB");
  ::unsetenv("RACKTWIN_CATALOG");
  const char* path = std::getenv("PATH");
  const std::string p =
      (dir / "build/cli").string() + ":" + (path != nullptr ? path : "/usr/bin:/bin");
  ::setenv("PATH", p.c_str(), 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
#ifdef __SANITIZE_ADDRESS__
  // stdbuf line-buffers the commands' output through LD_PRELOAD, ahead of the sanitizer's runtime,
  // which then refuses to start unless told that the order is intended.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string options = std::string(asan != nullptr ? asan : "") +
                              (asan != nullptr && *asan != '\0' ? ":" : "") +
                              "verify_asan_link_order=0";
  ::setenv("ASAN_OPTIONS", options.c_str(), 1);
#endif
}

// "cat FILE" of a file the block shows but does not make: the test writes what the block shows.
void write_shown_file(const fs::path& dir, const Command& c) {
  static const std::regex cat(R"(^cat ([A-Za-z0-9_./-]+)\s*$)");
  std::smatch m;
  if (!std::regex_match(c.text, m, cat)) return;
  const fs::path file = dir / m[1].str();
  if (fs::exists(file)) return;
  auto lines = c.expected;
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  fs::create_directories(file.parent_path());
  std::ofstream out(file);
  for (const auto& l : lines) out << l << "\n";
}

// Rewrites block `b` in its file with the outputs printed, under a lock on the file (blocks of one
// file may run at once).
void update_block(const Block& b, const std::vector<Command>& commands) {
  const fs::path path = fs::path(RACKTWIN_SOURCE_DIR) / b.file;
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << path;
  ::flock(fd, LOCK_EX);
  const std::string text = read_file(path);
  const std::string updated = replace_block(text, b.index, commands);
  if (updated != text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << updated;
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

class ConsoleBlock : public testing::TestWithParam<Block> {};

TEST_P(ConsoleBlock, MatchesTheBinary) {
  const Block& b = GetParam();
  ASSERT_TRUE(b.error.empty()) << b.file << ":" << b.line << ": " << b.error;
  static const racktwin::test::SharedOutput shared;
  Workdir w;
  set_environment(w.dir);
  const bool update = env_is("RACKTWIN_DOCS_UPDATE", "1");
  std::vector<Command> updated = b.commands;
  bool changed = false;
  int exit_code = 0;
  for (std::size_t k = 0; k < b.commands.size(); ++k) {
    const Command& c = b.commands[k];
    write_shown_file(w.dir, c);
    const Ran r = k == 0 && replayable(c) ? first_command(shared, w.dir, c)
                                          : run_command(w.dir, c.text, exit_code);
    exit_code = r.exit_code;
    std::cout << b.file << ":" << b.line << " $ " << c.text << "  (" << r.seconds << " s, exit "
              << r.exit_code << ")\n";
    const Comparison cmp = compare_output(c.expected, r.lines, b.tolerances, w.dir.string());
    if (cmp.matches) continue;
    changed = true;
    if (update) {
      auto lines = retrim(c.expected, r.lines);
      // Keep the blank line the block had before its next command.
      if (k + 1 < b.commands.size() && !c.expected.empty() && c.expected.back().empty())
        lines.emplace_back();
      updated[k].expected = std::move(lines);
      continue;
    }
    std::string printed;
    for (const auto& l : r.lines) printed += "  | " + l + "\n";
    ADD_FAILURE() << b.file << ":" << b.line << ": the output of\n  $ " << c.text
                  << "\nno longer matches the block (exit code " << r.exit_code << "):\n  "
                  << cmp.message << "\nprinted:\n"
                  << printed
                  << "Fix the docs or the code; RACKTWIN_DOCS_UPDATE=1 rewrites the block from "
                     "the output.";
  }
  if (update && changed) {
    update_block(b, updated);
    std::cout << "rewrote " << b.file << " console block " << b.index << " (line " << b.line
              << ")\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Docs, ConsoleBlock, testing::ValuesIn(runnable_blocks()),
                         [](const testing::TestParamInfo<Block>& param) {
                           return param.param.name();
                         });

// The comparison itself: it must fail on drift and pass on what legitimately changes.

std::vector<std::string> L(std::initializer_list<const char*> v) {
  return {v.begin(), v.end()};
}

TEST(DocsCompare, NumberDriftedBeyondTolerance_Fails) {
  const Tolerances exact;
  EXPECT_FALSE(
      compare_output(L({"jalapeno-a0  63351  tp8-dpa"}), L({"jalapeno-a0  63352  tp8-dpa"}), exact)
          .matches);
  EXPECT_FALSE(compare_output(L({"min TBT 0.85 ms"}), L({"min TBT 0.86 ms"}), exact).matches);
  const Tolerances loose = parse_directive(" numbers within 1% (wall time) ");
  EXPECT_TRUE(compare_output(L({"took 20.46 s"}), L({"took 20.5 s"}), loose).matches);
  EXPECT_FALSE(compare_output(L({"took 20.46 s"}), L({"took 21 s"}), loose).matches);
}

TEST(DocsCompare, SameNumberInAnotherForm_Passes) {
  EXPECT_TRUE(compare_output(L({"rate 0.0, x 1e6"}), L({"rate 0, x 1000000"}), {}).matches);
}

TEST(DocsCompare, TextDifference_FailsWhateverTheTolerance) {
  const Tolerances loose = parse_directive("numbers within 50%");
  EXPECT_FALSE(
      compare_output(L({"best layout tp8-dpa"}), L({"best layout tp4-dpa"}), loose).matches);
  EXPECT_FALSE(compare_output(L({"workload 8k1k"}), L({"workload 8k2k"}), loose).matches);
  EXPECT_FALSE(compare_output(L({"racktwin 0.1.0"}), L({"racktwin 0.1.1"}), loose).matches);
  EXPECT_FALSE(
      compare_output(L({"tps_per_allin_mw 1"}), L({"tps_per_allin_provisioned_mw 1"}), loose)
          .matches);
}

TEST(DocsCompare, CommitDifference_Passes) {
  EXPECT_TRUE(compare_output(L({"racktwin 0.1.0 (commit f1aa61e): scenario 'x'"}),
                             L({"racktwin 0.1.0 (commit 0123abcd4567-modified): scenario 'x'"}), {})
                  .matches);
  EXPECT_TRUE(compare_output(L({" 1  finished  0.1.0 (7d992b26e7b9)"}),
                             L({" 1  finished  0.1.0 (0123abcd4567-modified)"}), {})
                  .matches);
  EXPECT_TRUE(compare_output(L({R"(  "commit": "2b817bd07c14",)"}),
                             L({R"(  "commit": "614c0588095f-modified",)"}), {})
                  .matches);
}

TEST(DocsCompare, DatesPidsHostsAndTheTemporaryDirectory_Pass) {
  EXPECT_TRUE(compare_output(L({"started 2026-12-02T15:26:05Z, pid 20807"}),
                             L({"started 2027-01-31T09:00:00Z, pid 4"}), {})
                  .matches);
  EXPECT_TRUE(compare_output(L({R"({"pid": 20807, "host": "vm"})"}),
                             L({R"({"pid": 1, "host": "build-7"})"}), {})
                  .matches);
  EXPECT_TRUE(compare_output(L({"wrote <tmp>/out/run.csv"}),
                             L({"wrote /tmp/racktwin-docs-a1/out/run.csv"}), {},
                             "/tmp/racktwin-docs-a1")
                  .matches);
}

TEST(DocsCompare, ColumnWidthsAndTableRules_FollowTheNumbers) {
  EXPECT_TRUE(compare_output(L({"id  wall s", "--  ------", " 1     0.1"}),
                             L({"id  wall s", "--  -------", " 1       0.1"}), {})
                  .matches);
  EXPECT_FALSE(compare_output(L({"--  ------"}), L({"--  ------  --"}), {}).matches);
}

TEST(DocsCompare, EllipsisLine_SkipsAnyNumberOfLines) {
  const auto printed = L({"head", "a", "b", "c", "middle", "d", "tail"});
  EXPECT_TRUE(compare_output(L({"head", "...", "middle", "...", "tail"}), printed, {}).matches);
  EXPECT_TRUE(compare_output(L({"head", "...", "a", "...", "tail"}), printed, {}).matches);
  EXPECT_TRUE(compare_output(L({"...", "tail"}), printed, {}).matches);
  EXPECT_TRUE(compare_output(L({"head", "a", "..."}), printed, {}).matches);
  EXPECT_TRUE(compare_output(L({"      ..."}), printed, {}).matches);
  EXPECT_FALSE(compare_output(L({"head", "...", "missing", "..."}), printed, {}).matches);
  EXPECT_FALSE(compare_output(L({"head", "..."}), L({"other"}), {}).matches);
}

TEST(DocsCompare, MissingOrExtraLine_Fails) {
  const auto shown = L({"a", "b"});
  EXPECT_FALSE(compare_output(shown, L({"a"}), {}).matches);
  EXPECT_FALSE(compare_output(shown, L({"a", "b", "c"}), {}).matches);
  EXPECT_TRUE(compare_output(shown, L({"a", "b", "", ""}), {}).matches);
  const Comparison c = compare_output(shown, L({"a", "x"}), {});
  EXPECT_NE(c.message.find("expected line 2"), std::string::npos) << c.message;
}

TEST(DocsCompare, ToleranceOnLinesMatching_AppliesToThoseLinesOnly) {
  const Tolerances t = parse_directive(R"(numbers within 100% on lines matching "finished")");
  EXPECT_TRUE(compare_output(L({" 1  finished  0.1"}), L({" 1  finished  0.4"}), t).matches);
  EXPECT_FALSE(compare_output(L({" 1  failed  0.1"}), L({" 1  failed  0.4"}), t).matches);
}

TEST(DocsParse, ConsoleBlocks_CommandsOutputsAndDirectives) {
  const std::string md =
      "# T\n\n```sh\n$ racktwin not-a-console-block\n```\n\n"
      "<!-- docs-test: numbers within 50% (wall time) -->\n"
      "```console\n$ racktwin run x.yaml\nline 1\n...\n$ echo $?\n0\n```\n\n"
      "```console\n$ ls\n```\n";
  const auto blocks = parse_blocks(md, "docs/t.md");
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].name(), "docs_t_md_0");
  EXPECT_EQ(blocks[0].line, 8);
  EXPECT_DOUBLE_EQ(blocks[0].tolerances.relative, 0.5);
  ASSERT_EQ(blocks[0].commands.size(), 2u);
  EXPECT_EQ(blocks[0].commands[0].text, "racktwin run x.yaml");
  EXPECT_EQ(blocks[0].commands[0].expected, L({"line 1", "..."}));
  EXPECT_TRUE(blocks[0].runs_racktwin());
  EXPECT_FALSE(blocks[1].runs_racktwin());
  EXPECT_DOUBLE_EQ(blocks[1].tolerances.relative, 1e-9);
}

TEST(DocsParse, UnknownDirective_IsAnError) {
  EXPECT_THROW(parse_directive("skip this block"), std::invalid_argument);
  const auto blocks = parse_blocks(
      "<!-- docs-test: numbers about 5% -->\n```console\n$ racktwin\n```\n", "README.md");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_NE(blocks[0].error.find("numbers about 5%"), std::string::npos) << blocks[0].error;
}

TEST(DocsUpdate, Retrim_KeepsTheTrimsWhosePartsAreFound) {
  const auto printed = L({"header v2", "row 1", "row 2", "row 3", "total 7", "footer", ""});
  EXPECT_EQ(retrim(L({"header v1", "...", "total 6", "..."}), printed),
            L({"header v2", "...", "total 7", "..."}));
  EXPECT_EQ(retrim(L({"...", "footer"}), printed), L({"...", "footer"}));
  EXPECT_EQ(retrim(L({"header v1", "row 1"}), printed),
            L({"header v2", "row 1", "row 2", "row 3", "total 7", "footer"}));
}

TEST(DocsUpdate, ReplaceBlock_RewritesOnlyThatBlock) {
  const std::string md =
      "a\n```console\n$ racktwin x\nold\n```\nb\n```console\n$ racktwin y\n1\n```\n";
  const std::string out = replace_block(md, 1, {{"racktwin y", {"2", "3"}}});
  EXPECT_EQ(out, "a\n```console\n$ racktwin x\nold\n```\nb\n```console\n$ racktwin y\n2\n3\n```\n");
  EXPECT_THROW(replace_block(md, 1, {{"racktwin z", {}}}), std::runtime_error);
}

}  // namespace
