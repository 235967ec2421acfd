// Fuzzing the loaders with deterministic mutants of the shipped files, and replaying the regression
// corpus in tests/fuzz/corpus/. Every input must be accepted with values that make sense or
// rejected with located diagnostics (targets.hpp); a crash or a hang fails the test under CTest.
//
// Environment (all optional):
//   RACKTWIN_FUZZ_EXECUTIONS  mutants over all targets (default kDefaultExecutions), shared by the
//                             targets' weights; 1000000 for the long run (DEVELOPERS.md)
//   RACKTWIN_FUZZ_SEED        the master seed (default 1); each target's stream is split from it
//   RACKTWIN_FUZZ_SAVE_DIR    where failing inputs, the input being run (left behind by a crash)
//                             and the slowest input are written (default: a folder in the
//                             temporary directory)

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "mutator.hpp"
#include "targets.hpp"

namespace racktwin::fuzz {
namespace {

namespace fs = std::filesystem;

// Mutants per CTest run over all targets: about 30 s on one core of the CI machine in the
// RelWithDebInfo build.
constexpr std::size_t kDefaultExecutions = 20000;

// Shares of the executions: the cheap targets run more (a catalog mutant reads the whole
// catalog, about six times the work of a scenario mutant; a unit is read in microseconds).
const std::map<std::string, double> kWeights{{"scenario", 4}, {"plan", 2},  {"rehearsal", 2},
                                             {"points", 2},   {"trace", 3}, {"catalog", 0.5},
                                             {"units", 6.5}};

const std::string kCorpus = std::string(RACKTWIN_TEST_DATA) + "/corpus";

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

std::size_t executions_of(const std::string& target) {
  double total = 0;
  for (const auto& [_, w] : kWeights) total += w;
  const auto all = static_cast<double>(env_number("RACKTWIN_FUZZ_EXECUTIONS", kDefaultExecutions));
  return static_cast<std::size_t>(all * kWeights.at(target) / total + 0.5);
}

fs::path save_dir() {
  const char* v = std::getenv("RACKTWIN_FUZZ_SAVE_DIR");
  fs::path d =
      v != nullptr && *v != '\0' ? fs::path(v) : fs::temp_directory_path() / "racktwin-fuzz";
  fs::create_directories(d);
  return d;
}

std::string extension_of(const Target& t) {
  return t.name == "trace" ? ".jsonl" : t.name == "units" ? ".txt" : ".yaml";
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The input being run, kept in a file that a crash leaves behind: rewritten in place before each
// execution, removed when the campaign ends.
class CurrentInput {
 public:
  explicit CurrentInput(fs::path path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  ~CurrentInput() {
    if (fd_ >= 0) ::close(fd_);
    std::error_code ec;
    fs::remove(path_, ec);
  }
  void set(const std::string& text) {
    if (fd_ < 0) return;
    if (::pwrite(fd_, text.data(), text.size(), 0) < 0 ||
        ::ftruncate(fd_, static_cast<off_t>(text.size())) != 0)
      return;  // a lost copy costs only the crash report's input
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  int fd_ = -1;
};

// At most this many failing inputs are kept and reported per campaign.
constexpr std::size_t kMaxReported = 20;

struct Campaign {
  std::size_t executions = 0, accepted = 0, rejected = 0;
  std::vector<std::string> failures;  // each: the saved input and what it broke
  double slowest_ms = 0;
  std::size_t slowest_index = 0;
};

std::string describe(const std::vector<std::string>& problems) {
  std::string s;
  for (const auto& p : problems) s += "\n    " + p.substr(0, 400);
  return s;
}

std::string describe(const Diagnostics& d) {
  std::string s;
  for (const auto& x : d) s += "\n    " + x.to_string().substr(0, 400);
  return s;
}

// The corpus inputs of a target: files of corpus/<target>/, each read as a file of the target's
// home named by the part of its name before "--" (so "agentic-multiturn--x.yaml" is read as the
// shipped agentic-multiturn.yaml would be, and a catalog input replaces that catalog file).
std::vector<std::pair<fs::path, Seed>> corpus_of(const Target& t) {
  std::vector<std::pair<fs::path, Seed>> out;
  const fs::path dir = fs::path(kCorpus) / t.name;
  if (!fs::is_directory(dir)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "README.md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string file = f.filename().string();
    const auto cut = file.find("--");
    const std::string stem = cut == std::string::npos ? f.stem().string() : file.substr(0, cut);
    std::string text = read_file(f);
    if (t.name == "units" && !text.empty() && text.back() == '\n') text.pop_back();
    out.push_back({f, Seed{t.home.empty() ? "unit" : t.home + stem + f.extension().string(),
                           std::move(text)}});
  }
  return out;
}

// An input that makes a loader take memory without bound ends in std::bad_alloc, an escaped
// exception reported with the input, instead of taking the machine's memory. Not under
// AddressSanitizer, which reserves terabytes of address space (scripts/test gives it a hard RSS
// limit instead).
void limit_address_space() {
#ifndef __SANITIZE_ADDRESS__
  constexpr rlim_t kLimit = rlim_t{4} << 30;
  rlimit r{};
  if (::getrlimit(RLIMIT_AS, &r) == 0 && (r.rlim_cur == RLIM_INFINITY || r.rlim_cur > kLimit)) {
    r.rlim_cur = kLimit;
    ::setrlimit(RLIMIT_AS, &r);
  }
#endif
}

Campaign run_campaign(const Target& t, std::size_t executions, std::uint64_t seed) {
  limit_address_space();
  // Mutants start from the seeds and the corpus; splices come from every target's seeds.
  std::vector<Seed> pool = t.seeds;
  for (auto& [_, s] : corpus_of(t)) pool.push_back(std::move(s));
  std::vector<std::string> lines, words;
  for (const auto& other : targets())
    for (const auto& s : other.seeds) {
      const auto l = split_lines(s.text);
      lines.insert(lines.end(), l.begin(), l.end());
      const auto w = words_of(s.text);
      words.insert(words.end(), w.begin(), w.end());
    }
  Mutator mutator(seed ^ hash_name(t.name), std::move(lines), std::move(words));
  const fs::path dir = save_dir();
  const std::string ext = extension_of(t);
  CurrentInput current(dir / (t.name + "-running-" + std::to_string(::getpid()) + ext));
  std::printf("fuzz %s: %zu mutants, seed %llu; a crash leaves its input in %s\n", t.name.c_str(),
              executions, static_cast<unsigned long long>(seed), current.path().c_str());
  std::fflush(stdout);
  Campaign c;
  std::string slowest;
  for (std::size_t i = 0; i < executions; ++i) {
    const Seed& base = pool[mutator.rng().below(pool.size())];
    const std::string text = mutator.mutate(base.text);
    current.set(text);
    const auto start = std::chrono::steady_clock::now();
    const Verdict v = execute(t, text, base.name);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ++c.executions;
    ++(v.accepted ? c.accepted : c.rejected);
    if (ms > c.slowest_ms) {
      c.slowest_ms = ms;
      c.slowest_index = i;
      slowest = text;
    }
    if (!v.problems.empty() && c.failures.size() < kMaxReported) {
      const fs::path saved = dir / (t.name + "-failure-" + std::to_string(i) + ext);
      write_file(saved, text);
      c.failures.push_back(
          saved.string() + " (read as " + base.name + "):" + describe(v.problems) +
          describe(Diagnostics(
              v.diagnostics.begin(),
              v.diagnostics.begin() + std::min<std::ptrdiff_t>(3, std::ssize(v.diagnostics)))));
    }
  }
  write_file(dir / (t.name + "-slowest" + ext), slowest);
  std::printf(
      "fuzz %s: %zu executions, %zu accepted, %zu rejected, %zu failing; slowest %.1f ms "
      "(mutant %zu, saved as %s)\n",
      t.name.c_str(), c.executions, c.accepted, c.rejected, c.failures.size(), c.slowest_ms,
      c.slowest_index, (dir / (t.name + "-slowest" + ext)).c_str());
  return c;
}

void fuzz(const std::string& name) {
  const Target& t = target(name);
  const Campaign c = run_campaign(t, executions_of(name), env_number("RACKTWIN_FUZZ_SEED", 1));
  EXPECT_EQ(c.executions, executions_of(name));
  EXPECT_GT(c.rejected, 0u) << "no mutant was rejected: the mutator does not reach the loader";
  std::string all;
  for (const auto& f : c.failures) all += "\n  " + f;
  EXPECT_TRUE(c.failures.empty()) << c.failures.size() << " failing inputs (first " << kMaxReported
                                  << " kept):" << all;
}

TEST(ScenarioLoader_Fuzz, Mutants_AreAcceptedSoundlyOrRejectedWithLocatedDiagnostics) {
  fuzz("scenario");
}
TEST(PlanLoader_Fuzz, Mutants_AreAcceptedSoundlyOrRejectedWithLocatedDiagnostics) {
  fuzz("plan");
}
TEST(RehearsalLoader_Fuzz, Mutants_AreAcceptedSoundlyOrRejectedWithLocatedDiagnostics) {
  fuzz("rehearsal");
}
TEST(PointsLoader_Fuzz, Mutants_AreAcceptedSoundlyOrRejectedWithLocatedDiagnostics) {
  fuzz("points");
}
TEST(TraceLoader_Fuzz, Mutants_AreAcceptedSoundlyOrRejectedWithLocatedDiagnostics) {
  fuzz("trace");
}
TEST(CatalogLoader_Fuzz, Mutants_AreAcceptedSoundlyOrRejectedWithLocatedDiagnostics) {
  fuzz("catalog");
}
TEST(UnitParser_Fuzz, Mutants_AreFiniteOrRejectedWithAMessage) {
  fuzz("units");
}

// The regression corpus: inputs that once crashed or misbehaved, and a few that reach far. An
// input whose name holds "--reject-" must be rejected.
TEST(Fuzz_Corpus, EveryInput_KeepsTheProperties) {
  limit_address_space();
  std::size_t replayed = 0;
  for (const auto& t : targets())
    for (const auto& [file, seed] : corpus_of(t)) {
      const Verdict v = execute(t, seed.text, seed.name);
      ++replayed;
      EXPECT_TRUE(v.problems.empty()) << file << ":" << describe(v.problems);
      if (file.filename().string().find("--reject-") != std::string::npos) {
        EXPECT_FALSE(v.accepted) << file << " must be rejected";
      }
    }
  EXPECT_GE(replayed, 10u) << "the corpus in " << kCorpus << " is missing";
}

TEST(Fuzz_Seeds, EveryShippedSeed_IsAcceptedWithoutProblems) {
  for (const auto& t : targets()) {
    EXPECT_FALSE(t.seeds.empty()) << t.name;
    for (const auto& s : t.seeds) {
      const Verdict v = execute(t, s.text, s.name);
      EXPECT_TRUE(v.accepted && v.problems.empty() && v.diagnostics.empty())
          << t.name << " " << s.name << ":" << describe(v.problems) << describe(v.diagnostics);
    }
  }
}

TEST(Fuzz_Mutator, SameSeed_SameMutants_OtherSeed_OtherMutants) {
  const Seed& s = target("scenario").seeds.front();
  auto mutants = [&](std::uint64_t seed) {
    Mutator m(seed, split_lines(s.text), words_of(s.text));
    std::vector<std::string> out;
    for (int i = 0; i < 200; ++i) out.push_back(m.mutate(s.text));
    return out;
  };
  EXPECT_EQ(mutants(7), mutants(7));
  EXPECT_NE(mutants(7), mutants(8));
}

TEST(Fuzz_Mutator, EveryMutation_ChangesATypicalInput) {
  const std::string text = "name: x\nvalues: [1, 2.5e3]\npower: '700 W'\n";
  Mutator m(3, {"other: line"}, {"word"});
  for (int k = 0; k < kMutationCount; ++k) {
    const auto mutation = static_cast<Mutation>(k);
    int changed = 0;
    for (int i = 0; i < 20; ++i) changed += m.apply(mutation, text) != text;
    EXPECT_GE(changed, 10) << to_string(mutation);
  }
}

TEST(Fuzz_Mutator, ExtremeNumber_ReplacesANumberOfTheInput) {
  Mutator m(5, {}, {});
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string out = m.apply(Mutation::extreme_number, "a: 12\n");
    ASSERT_EQ(out.rfind("a: ", 0), 0u) << out;
    seen.insert(out.substr(3, out.size() - 4));
  }
  EXPECT_TRUE(seen.contains("1e308") && seen.contains("-1") && seen.contains("nan") &&
              seen.contains("18446744073709551616"))
      << seen.size();
}

// The oracle itself: each broken property is reported.
TEST(Fuzz_Oracle, DiagnosticWithoutLineOrFile_IsAProblem) {
  const std::string text = "a: 1\nb: 2\n";
  EXPECT_TRUE(diagnostic_problems({Diagnostic{{"f.yaml", 2, 1}, "b", "wrong", ""}}, text, "f.yaml")
                  .empty());
  EXPECT_FALSE(
      diagnostic_problems({Diagnostic{{"f.yaml", 0, 0}, "", "wrong", ""}}, text, "f.yaml").empty());
  EXPECT_FALSE(
      diagnostic_problems({Diagnostic{{"", 2, 1}, "", "wrong", ""}}, text, "f.yaml").empty());
  EXPECT_FALSE(
      diagnostic_problems({Diagnostic{{"f.yaml", 2, 1}, "", "", ""}}, text, "f.yaml").empty());
  EXPECT_FALSE(diagnostic_problems({}, text, "f.yaml").empty());
  EXPECT_FALSE(
      diagnostic_problems({Diagnostic{{"f.yaml", 9, 1}, "", "wrong", ""}}, text, "f.yaml").empty());
  // A diagnostic in another file (a trace named by a scenario) may be at any line of that file.
  EXPECT_TRUE(diagnostic_problems({Diagnostic{{"t.jsonl", 9, 1}, "", "wrong", ""}}, text, "f.yaml")
                  .empty());
}

TEST(Fuzz_Oracle, EscapingException_IsAProblem_InputError_IsARejection) {
  Target throws{"t", "", {}, [](const std::string&, const std::string&, Verdict&) {
                  throw std::out_of_range("stoi");
                }};
  const Verdict a = execute(throws, "x", "f.yaml");
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_NE(a.problems[0].find("stoi"), std::string::npos) << a.problems[0];
  Target input_error{"t", "", {}, [](const std::string&, const std::string&, Verdict&) {
                       throw InputError({Diagnostic{{"f.yaml", 1, 1}, "", "wrong", ""}});
                     }};
  const Verdict b = execute(input_error, "x", "f.yaml");
  EXPECT_FALSE(b.accepted);
  EXPECT_TRUE(b.problems.empty()) << describe(b.problems);
}

TEST(Fuzz_Oracle, ValidUtf8_IsTold_FromInvalid) {
  EXPECT_TRUE(valid_utf8("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  for (const char* bad : {"\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80"})
    EXPECT_FALSE(valid_utf8(bad)) << bad;
}

}  // namespace
}  // namespace racktwin::fuzz
