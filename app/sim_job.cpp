#include "app/sim_job.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "app/json.hpp"
#include "app/point_codec.hpp"
#include "app/process.hpp"
#include "db/codec.hpp"
#include "db/provenance.hpp"
#include "racktwin/version.hpp"
#include "scenarios/catalog_loader.hpp"
#include "sim/serving.hpp"

namespace racktwin::app {
namespace fs = std::filesystem;

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

namespace {

// A rough cost of simulating one point, in requests: it orders and groups the points so that the
// workers finish together. Only the balance depends on it, never a result.
double cost_estimate(const sim::PointSpec& s) {
  struct Requests {
    const sim::PointSpec& s;
    double operator()(const sim::ClosedLoop& c) const {
      return static_cast<double>(c.clients) * s.workload.prompts_per_client;
    }
    double operator()(const sim::OpenLoop&) const { return s.workload.requests; }
    double operator()(const sim::TraceReplay& t) const {
      return t.trace.requests ? static_cast<double>(t.trace.requests->size()) : 0.0;
    }
    double operator()(const sim::Agentic& g) const { return static_cast<double>(g.clients) * 10.0; }
  };
  const double requests = std::visit(Requests{s}, s.arrivals);
  // Decode iterations grow with the output length; a fixed part is building the platform.
  return 20.0 + requests * (1.0 + static_cast<double>(s.workload.osl) / 1024.0);
}

// Groups per batch: enough for several workers to finish together, few enough that starting a
// process (catalog, job file, platform) stays a small share of the work.
constexpr double kGroupsPerBatch = 32;
// A group costs at least this much (about 1 s of simulation on one core of the development
// machine; starting a worker takes about 0.1 s, under the sanitizers 0.25 s), unless the batch is
// too small to make kMinGroups groups of it. Neither depends on the workers: the grouping is fixed
// by the points alone.
constexpr double kMinGroupCost = 300'000;
constexpr double kMinGroups = 4;

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

// $env, else `name` beside this executable, else the one this build made.
std::string find_executable(const std::string& given, const char* env, const std::string& name,
                            const std::string& built) {
  if (!given.empty()) return given;
  if (const char* e = std::getenv(env); e != nullptr && *e != '\0') return e;
  const fs::path beside = fs::path(executable_dir()) / name;
  if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  return built;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A started worker and the state of its output.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  int in = -1;                    // a local worker's standard input: the groups it is handed
  std::string buffer;             // a line not yet complete
  std::vector<std::size_t> todo;  // its groups not yet done
};

// Its own process group: cancel() ends it and its children.
std::expected<Child, std::string> spawn(const std::vector<std::string>& argv, bool input) {
  auto p = spawn_piped(argv, true, input);
  if (!p) return std::unexpected(p.error());
  Child c;
  c.pid = p->pid;
  c.fd = p->fd;
  c.in = p->in;
  return c;
}

}  // namespace

std::vector<std::vector<std::size_t>> plan_groups(const std::vector<sim::PointSpec>& specs) {
  std::vector<std::size_t> order(specs.size());
  std::vector<double> cost(specs.size());
  double total = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    order[i] = i;
    cost[i] = cost_estimate(specs[i]);
    total += cost[i];
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  const double grain =
      std::max(total / kGroupsPerBatch, std::min(kMinGroupCost, total / kMinGroups));
  std::vector<std::vector<std::size_t>> groups;
  double in_group = 0;
  for (std::size_t i : order) {
    if (groups.empty() || (in_group > 0 && in_group + cost[i] > grain)) {
      groups.emplace_back();
      in_group = 0;
    }
    groups.back().push_back(i);
    in_group += cost[i];
  }
  return groups;
}

SimJob::SimJob(const Catalog& catalog, std::vector<sim::PointSpec> specs, JobOptions options)
    : catalog_(&catalog), specs_(std::move(specs)), options_(std::move(options)) {
  groups_ = plan_groups(specs_);
  skipped_.assign(groups_.size(), false);
  for (const auto& g : groups_) {
    double c = 0;
    for (std::size_t i : g) c += cost_estimate(specs_[i]);
    group_cost_.push_back(c);
  }
}

void SimJob::skip(const std::set<std::int64_t>& done) {
  for (std::size_t g = 0; g < groups_.size(); ++g)
    skipped_[g] = std::all_of(groups_[g].begin(), groups_[g].end(), [&](std::size_t i) {
      return done.contains(static_cast<std::int64_t>(i));
    });
}

std::size_t SimJob::points_to_simulate() const {
  std::size_t n = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (!skipped_[g]) n += groups_[g].size();
  return n;
}

namespace {

// The build that wrote a job: a worker from another build (a stale install, a partial rebuild)
// may read the points differently, so it refuses the job instead of guessing.
std::string build_stamp() { return std::string(kVersion) + " " + kGitCommit; }

}  // namespace

int remove_orphaned_job_files(const std::string& dir) {
  static const std::string prefix = "racktwin-job-";
  const auto day_ago = fs::file_time_type::clock::now() - std::chrono::hours(24);
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto dash = name.find('-', prefix.size());
    if (name.rfind(prefix, 0) != 0 || dash == std::string::npos || dash == prefix.size()) continue;
    long pid = 0;
    const auto [end_of_pid, bad] =
        std::from_chars(name.data() + prefix.size(), name.data() + dash, pid);
    if (bad != std::errc() || end_of_pid != name.data() + dash || pid <= 0) continue;
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec) || it->last_write_time(file_ec) > day_ago || file_ec)
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    if (fs::remove(it->path(), file_ec)) ++removed;
  }
  return removed;
}

namespace {

// The job file: the build, the catalog's files and hash, the options, every point and the groups.
std::expected<std::string, std::string> write_job_file(
    const Catalog& cat, const std::vector<sim::PointSpec>& specs,
    const std::vector<std::vector<std::size_t>>& groups, const JobOptions& o) {
  std::string dir = o.temp_dir;
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = t != nullptr && *t != '\0' ? t : "/tmp";
  }
  remove_orphaned_job_files(dir);
  std::string pattern =
      (fs::path(dir) / ("racktwin-job-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    return std::unexpected("cannot create a job file in " + dir + ": " + std::strerror(errno) +
                           " (set TMPDIR to a writable directory)");
  ::close(fd);
  nlohmann::json j;
  j["build"] = build_stamp();
  j["catalog_files"] = cat.files;
  j["catalog_hash"] = db::catalog_hash(cat);
  j["fuse"] = o.fuse;
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& s : specs) pts.push_back(spec_to_json(s));
  j["points"] = std::move(pts);
  j["groups"] = groups;
  std::ofstream out(pattern, std::ios::binary | std::ios::trunc);
  out << j.dump();
  out.close();
  if (!out) {
    ::unlink(pattern.c_str());
    return std::unexpected("cannot write the job file " + pattern + " (disk full?)");
  }
  return pattern;
}

struct JobFileGuard {
  std::string path;
  ~JobFileGuard() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

std::expected<void, std::string> SimJob::run(const Callbacks& cb) {
  std::vector<std::size_t> todo;
  double total_cost = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (!skipped_[g]) {
      todo.push_back(g);
      total_cost += group_cost_[g];
    }
  if (todo.empty()) {
    if (cb.on_progress) cb.on_progress(1.0);
    return {};
  }
  auto job = write_job_file(*catalog_, specs_, groups_, options_);
  if (!job) return std::unexpected(job.error());
  JobFileGuard guard{*job};
  const std::string worker =
      find_executable(options_.worker, "RACKTWIN_SIM", "racktwin-sim", RACKTWIN_SIM_BUILT);

  std::vector<Child> running;
  std::map<std::size_t, std::vector<db::StoredPoint>> pending;  // by group
  std::map<std::size_t, double> partial;                        // progress of running groups
  double done_cost = 0;
  std::string failure;
  std::size_t next = 0;

  auto stopping = [&] {
    return !failure.empty() || cancelled_ || (options_.cancel != nullptr && *options_.cancel);
  };
  // A local worker reads the job once and simulates the groups it is handed, one at a time: the
  // next as soon as it reports the last done; its input closed when none is left, and it ends.
  auto hand_next = [&](Child& c) {
    if (c.in < 0 || !c.todo.empty()) return;
    if (!stopping() && next < todo.size()) {
      // A worker that cannot take it has died: the end of its output reports how.
      c.todo = {todo[next++]};
      const std::string line = std::to_string(c.todo[0]) + "\n";
      if (::send(c.in, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size()))
        return;
    }
    ::close(c.in);
    c.in = -1;
  };
  auto start_local = [&] {
    auto c = spawn({worker, *job, "--serve"}, true);
    if (!c) {
      failure = c.error();
      return;
    }
    running.push_back(std::move(*c));
    hand_next(running.back());
  };
  if (options_.backend == Backend::mpi) {
    std::vector<std::string> argv = split_words(options_.mpirun);
    if (argv.empty()) argv = {"mpirun"};
    const std::string mpi_worker = find_executable(options_.mpi_worker, "RACKTWIN_SIM_MPI",
                                                   "racktwin-sim-mpi", RACKTWIN_SIM_MPI_BUILT);
    std::string list;
    for (std::size_t g : todo) list += (list.empty() ? "" : ",") + std::to_string(g);
    for (const auto& a :
         {std::string("-n"), std::to_string(std::max(1, options_.ranks)), mpi_worker, *job,
          std::string("--worker"), worker, std::string("--groups"), list})
      argv.push_back(a);
    auto c = spawn(argv, false);
    if (!c) return std::unexpected(c.error());
    c->todo = todo;
    running.push_back(std::move(*c));
    next = todo.size();
  }
  const std::size_t slots =
      static_cast<std::size_t>(options_.jobs > 0 ? options_.jobs : default_jobs());

  auto report = [&] {
    if (!cb.on_progress) return;
    double p = done_cost;
    for (const auto& [g, f] : partial) p += group_cost_[g] * f;
    cb.on_progress(std::min(1.0, p / total_cost));
  };
  auto handle_line = [&](Child& c, const std::string& line) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      failure = "a simulation worker sent a line that is not JSON: " + line.substr(0, 80);
      return;
    }
    if (j.contains("error")) {
      failure = j["error"].get<std::string>();
    } else if (j.contains("point")) {
      auto p = db::point_from_json(j["point"]);
      if (!p)
        failure = p.error();
      else
        pending[j.at("group").get<std::size_t>()].push_back(std::move(*p));
    } else if (j.contains("progress")) {
      partial[j.at("group").get<std::size_t>()] = j["progress"].get<double>();
      report();
    } else if (j.contains("done")) {
      const auto g = j["done"].get<std::size_t>();
      std::erase(c.todo, g);
      partial.erase(g);
      done_cost += group_cost_[g];
      auto pts = std::move(pending[g]);
      pending.erase(g);
      if (pts.size() != groups_[g].size())
        failure = "a simulation worker sent " + std::to_string(pts.size()) + " of the " +
                  std::to_string(groups_[g].size()) + " points of its group";
      else if (cb.on_group)
        cb.on_group(std::move(pts));
      report();
    }
  };
  auto kill_all = [&] {
    for (auto& c : running) ::kill(-c.pid, SIGKILL);
  };

  bool killed = false;
  while (true) {
    if (!failure.empty() && !killed) {  // the workers still simulating stop at once
      kill_all();
      killed = true;
    }
    if (options_.backend == Backend::local)
      while (!stopping() && running.size() < slots && next < todo.size()) start_local();
    if (running.empty()) break;
    if ((cancelled_ || (options_.cancel != nullptr && *options_.cancel)) && failure.empty()) {
      failure = "cancelled";
      kill_all();
    }
    std::vector<pollfd> fds;
    for (const auto& c : running) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) {
      failure = std::string("cannot wait for the simulation workers: ") + std::strerror(errno);
      kill_all();
    }
    for (std::size_t k = running.size(); k-- > 0;) {
      if (fds[k].revents == 0) continue;
      Child& c = running[k];
      char buf[65536];
      const ssize_t n = ::read(c.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        c.buffer.append(buf, static_cast<std::size_t>(n));
        for (std::size_t nl; failure.empty() && (nl = c.buffer.find('\n')) != std::string::npos;) {
          const std::string line = c.buffer.substr(0, nl);
          c.buffer.erase(0, nl + 1);
          if (line.empty()) continue;
          // A callback that throws (out of memory, the database failing) fails the job like a
          // worker's error: the workers are stopped and the caller records why.
          try {
            handle_line(c, line);
          } catch (const std::exception& e) {
            failure = e.what();
          }
        }
        if (!failure.empty()) kill_all();
        hand_next(c);
        continue;
      }
      ::close(c.fd);
      if (c.in >= 0) ::close(c.in);
      const int status = reap(c.pid);
      if (failure.empty() && !c.todo.empty())
        failure = "a simulation worker " + exit_text(status) + " before finishing its points";
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      if (!failure.empty()) kill_all();
    }
  }
  if (!failure.empty()) return std::unexpected(failure);
  return {};
}

std::expected<std::vector<sim::PointResult>, std::string> simulate_in_workers(
    const Catalog& catalog, const std::vector<sim::PointSpec>& specs, const JobOptions& options) {
  std::vector<sim::PointResult> results(specs.size());
  SimJob job(catalog, specs, options);
  auto ok = job.run({[&](std::vector<db::StoredPoint> pts) {
                       for (auto& p : pts) {
                         const auto i = static_cast<std::size_t>(p.index);
                         results[i] = db::to_result(p, specs[i]);
                       }
                     },
                     {}});
  if (!ok) return std::unexpected(ok.error());
  return results;
}

std::expected<LoadedJob, std::string> load_job(const std::string& job_file) {
  std::ifstream in(job_file, std::ios::binary);
  if (!in) return std::unexpected("cannot read the job file " + job_file);
  LoadedJob loaded;
  loaded.file = job_file;
  loaded.job = nlohmann::json::parse(in, nullptr, false);
  const auto& job = loaded.job;
  if (job.is_discarded() || !job.is_object() || !job.contains("groups"))
    return std::unexpected("the job file " + job_file + " is not a racktwin job");
  try {
    if (const auto built = job.at("build").get<std::string>(); built != build_stamp())
      return std::unexpected("this worker is racktwin " + build_stamp() + " but the job was made by " +
                             built + "; rebuild or reinstall racktwin-sim with racktwin");
    const auto files = job.at("catalog_files").get<std::vector<std::string>>();
    auto cat = load_catalog_files(files);
    if (!cat) return std::unexpected("cannot load the catalog: " + cat.error().front().to_string());
    if (db::catalog_hash(*cat) != job.at("catalog_hash").get<std::string>())
      return std::unexpected("the catalog's files changed since the job was made");
    loaded.catalog = std::move(*cat);
  } catch (const nlohmann::json::exception& e) {
    return std::unexpected("the job file " + job_file + " is malformed: " + e.what());
  }
  return loaded;
}

std::expected<void, std::string> run_group(const LoadedJob& loaded, std::size_t group,
                                           const std::function<void(const std::string&)>& emit) {
  const auto& job = loaded.job;
  const Catalog& cat = loaded.catalog;
  try {
    const auto& groups = job.at("groups");
    if (group >= groups.size())
      return std::unexpected("the job has no group " + std::to_string(group));
    const auto indices = groups[group].get<std::vector<std::size_t>>();
    TraceCache traces;
    std::vector<sim::PointSpec> specs;
    for (std::size_t i : indices) {
      auto s = spec_from_json(job.at("points").at(i), cat, traces);
      if (!s) return std::unexpected(s.error());
      specs.push_back(std::move(*s));
    }
    sim::SimOptions opt;
    opt.fuse = job.at("fuse").get<bool>();
    int last = -1;
    opt.progress = [&](double f) {
      const int pct = static_cast<int>(f * 100);
      if (pct == last) return;
      last = pct;
      emit(Json{{"group", group}, {"progress", f}}.dump());
    };
    auto results = sim::simulate(cat, specs, opt);
    if (!results) {
      emit(Json{{"group", group}, {"error", results.error()}}.dump());
      return {};
    }
    for (std::size_t k = 0; k < results->size(); ++k) {
      const auto p = db::stored_point((*results)[k], static_cast<std::int64_t>(indices[k]));
      emit(Json{{"group", group}, {"point", db::point_json(p)}}.dump());
    }
    emit(Json{{"done", group}}.dump());
    return {};
  } catch (const nlohmann::json::exception& e) {
    return std::unexpected("the job file " + loaded.file + " is malformed: " + e.what());
  }
}

std::expected<void, std::string> run_worker(const std::string& job_file, std::size_t group,
                                            const std::function<void(const std::string&)>& emit) {
  auto loaded = load_job(job_file);
  if (!loaded) return std::unexpected(loaded.error());
  return run_group(*loaded, group, emit);
}

}  // namespace racktwin::app
