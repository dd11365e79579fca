// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/sweep_run.hpp"
#include "experiments/runner/parametric_store.hpp"
#include "experiments/runner/results_layout.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>

#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/io/output_lock.hpp"
#include "src/io/results.hpp"

extern char** environ;

namespace mor::experiments {
namespace {

namespace fs = std::filesystem;
using detail::concat;

std::string duration_text(double s) {
  if (!(s >= 0)) return "?";
  const long total = std::lround(s);
  char buf[32];
  if (s < 59.95)
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (total >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", total / 3600, (total / 60) % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldm%02lds", total / 60, total % 60);
  return buf;
}

/// Open MPI's mpirun (and other PMIx launchers) set these in every rank's environment.
bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

/// MPI for the life of a sweep: initialised only under mpirun, finalised on every way out.
class MpiSession {
 public:
  explicit MpiSession(bool wanted) {
    if (!wanted) return;
    if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) throw IoError("MPI_Init failed");
    active_ = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() {
    if (active_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1;
};

// Messages between rank 0 and the other ranks.
constexpr int kTagReady = 1;   // worker -> 0: a slot is free (no payload)
constexpr int kTagAssign = 2;  // 0 -> worker: int64 point index, or -1: no more points
constexpr int kTagResult = 3;  // worker -> 0: int64[4] {index, status, shipped bytes, shipped}
constexpr int kTagText = 4;    // worker -> 0: the failure message (chars)
constexpr int kTagFile = 5;    // worker -> 0: the point's results file, in chunks
constexpr std::int64_t kChunk = std::int64_t{1} << 26;

enum : std::int64_t { kDone = 0, kFailed = 1, kInterrupted = 2 };

/// A worker process running one point on this host.
struct Child {
  pid_t pid = -1;
  Index point = 0;
  int progress_fd = -1;
  std::string pending;  ///< a partial progress line
  std::string stage = "starting";
  double fraction = -1;
  Clock::time_point start = Clock::now();
  fs::path log;
};

struct Finished {
  Index point = 0;
  std::int64_t status = kDone;
  std::string message;
  double seconds = 0;  ///< wall time of the worker
};

/// The last non-empty line of a worker's log, without the program's prefix.
std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  for (const char* prefix : {"mor: error: ", "mor: numerical failure: ", "mor: "})
    if (last.rfind(prefix, 0) == 0) {
      last.erase(0, std::strlen(prefix));
      break;
    }
  return last;
}

/// Starts and reaps the worker processes of one rank.
class LocalWorkers {
 public:
  LocalWorkers(const SweepConfig& c, const SweepRunOptions& o, int threads_per_worker) : c_(c) {
    argv_.push_back(o.program.string());
    argv_.insert(argv_.end(), o.worker_arguments.begin(), o.worker_arguments.end());
    // The workers are ordinary processes, not MPI ranks: they get none of the launcher's
    // variables. With several points at once, BLAS and OpenMP keep to one thread each.
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string var = *e;
      if (var.rfind("OMPI_", 0) == 0 || var.rfind("PMIX_", 0) == 0 || var.rfind("PMI_", 0) == 0)
        continue;
      env_.push_back(var);
    }
    if (threads_per_worker > 0)
      for (const char* name : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"})
        if (std::getenv(name) == nullptr) env_.push_back(concat(name, "=", threads_per_worker));
  }
  ~LocalWorkers() {
    for (auto& ch : children_) {
      kill(ch.pid, SIGKILL);
      waitpid(ch.pid, nullptr, 0);
      if (ch.progress_fd >= 0) close(ch.progress_fd);
    }
  }
  LocalWorkers(const LocalWorkers&) = delete;
  LocalWorkers& operator=(const LocalWorkers&) = delete;

  std::size_t running() const { return children_.size(); }
  const std::vector<Child>& children() const { return children_; }

  void start(Index point) {
    const SweepPoint& p = c_.points[static_cast<std::size_t>(point)];
    Child ch;
    ch.point = point;
    ch.log = c_.points_dir / (p.key + ".log");
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
      throw IoError(concat("cannot create a pipe for a worker: ", std::strerror(errno)));
    const int log_fd = open(ch.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      close(pipe_fds[0]);
      close(pipe_fds[1]);
      throw IoError(concat("cannot write '", ch.log.string(), "': ", std::strerror(errno)));
    }
    std::vector<std::string> args = argv_;
    args.insert(args.end(), {"--worker", p.key, "--progress-fd", "3"});
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
      close(pipe_fds[0]);
      close(pipe_fds[1]);
      close(log_fd);
      throw IoError(concat("cannot start a worker process: ", std::strerror(errno)));
    }
    if (pid == 0) {
      // Only async-signal-safe calls from here to exec. The worker ends with its parent.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(1);
      const int null_fd = open("/dev/null", O_WRONLY);
      dup2(pipe_fds[1], 3);
      if (null_fd >= 0) dup2(null_fd, 1);
      dup2(log_fd, 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(pipe_fds[1]);
    close(log_fd);
    fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
    ch.pid = pid;
    ch.progress_fd = pipe_fds[0];
    children_.push_back(std::move(ch));
  }

  /// Reads the progress lines the workers wrote (stage TAB fraction).
  void read_progress() {
    for (auto& ch : children_) {
      char buf[512];
      for (;;) {
        const ssize_t n = read(ch.progress_fd, buf, sizeof buf);
        if (n <= 0) break;
        ch.pending.append(buf, static_cast<std::size_t>(n));
      }
      std::size_t nl;
      while ((nl = ch.pending.find('\n')) != std::string::npos) {
        const std::string line = ch.pending.substr(0, nl);
        ch.pending.erase(0, nl + 1);
        const auto tab = line.find('\t');
        if (tab == std::string::npos) continue;
        ch.stage = line.substr(0, tab);
        ch.fraction = std::atof(line.c_str() + tab + 1);
      }
    }
  }

  /// The points whose workers have ended since the last call.
  std::vector<Finished> reap() {
    std::vector<Finished> out;
    for (auto it = children_.begin(); it != children_.end();) {
      int status = 0;
      const pid_t r = waitpid(it->pid, &status, WNOHANG);
      if (r == 0) {
        ++it;
        continue;
      }
      Finished f;
      f.point = it->point;
      f.seconds = seconds_since(it->start);
      const SweepPoint& p = c_.points[static_cast<std::size_t>(it->point)];
      const bool exited = r > 0 && WIFEXITED(status);
      const int code = exited ? WEXITSTATUS(status) : -1;
      if (exited && code == 0 && completed_point_file(c_, p)) {
        f.status = kDone;
        std::error_code ignore;
        fs::remove(it->log, ignore);
      } else if ((exited && code == 130) ||
                 (r > 0 && WIFSIGNALED(status) &&
                  (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT))) {
        f.status = kInterrupted;
        std::error_code ignore;
        fs::remove(it->log, ignore);
      } else {
        f.status = kFailed;
        std::string why = last_line(it->log);
        if (r > 0 && WIFSIGNALED(status))
          why = concat("killed by signal ", WTERMSIG(status),
                       WTERMSIG(status) == SIGKILL ? " (out of memory?)" : "");
        else if (exited && code == 0)
          why = "the worker ended without a results file";
        else if (why.empty())
          why = concat("the worker exited with ", code);
        f.message = concat(why, " (log: ", it->log.string(), ")");
      }
      if (it->progress_fd >= 0) close(it->progress_fd);
      it = children_.erase(it);
      out.push_back(std::move(f));
    }
    return out;
  }

  void terminate_all() {
    for (const auto& ch : children_) kill(ch.pid, SIGTERM);
  }

  /// Waits up to `ms` for a progress line (a cheap sleep between polls otherwise).
  void wait(int ms) {
    std::vector<pollfd> fds;
    for (const auto& ch : children_) fds.push_back({ch.progress_fd, POLLIN, 0});
    if (fds.empty())
      poll(nullptr, 0, ms);
    else
      poll(fds.data(), fds.size(), ms);
  }

 private:
  const SweepConfig& c_;
  std::vector<std::string> argv_, env_;
  std::vector<Child> children_;
};

/// One line on stderr, redrawn: points done, what runs (stage and fraction), time left.
class SweepProgress {
 public:
  SweepProgress(const SweepConfig& c, const SweepRunOptions& o, Index total_to_run, int slots)
      : c_(c),
        enabled_(o.progress && !o.quiet),
        quiet_(o.quiet),
        slots_(std::max(1, slots)),
        to_run_(total_to_run) {}

  void finished(const SweepPoint& p, const Finished& f, double seconds, int rank) {
    ++finished_;
    if (f.status == kDone) {
      done_cost_ += p.cost_seconds;
      done_seconds_ += seconds;
      auto& [cost, wall] = per_study_[p.study];
      cost += p.cost_seconds;
      wall += seconds;
    }
    if (quiet_ && f.status != kFailed) return;
    clear();
    std::string detail;
    if (f.status == kDone) {
      try {
        const io::ResultsReader r(c_.points_dir / (p.key + ".h5"));
        const double err = r.attribute_double(layout::kSweepPoint, "output_error");
        const double speedup = r.attribute_double(layout::kSweepPoint, "speedup");
        const std::int64_t rr = r.attribute_int(layout::kSweepPoint, "r");
        if (rr > 0) detail = concat(", r = ", rr);
        if (std::isfinite(err)) detail += concat(", output error ", format("%.2e", err));
        if (std::isfinite(speedup)) detail += concat(", ", format("%.0f", speedup), "x per step");
      } catch (const IoError&) {
      }
    }
    const char* what = f.status == kDone ? "done" : f.status == kFailed ? "FAILED" : "stopped";
    std::fprintf(f.status == kFailed ? stderr : stdout, "[%lld/%lld] %s %s in %s%s%s%s\n",
                 static_cast<long long>(finished_), static_cast<long long>(to_run_), p.key.c_str(),
                 what, duration_text(seconds).c_str(), detail.c_str(),
                 rank > 0 ? concat(" (rank ", rank, ")").c_str() : "",
                 f.status == kFailed ? (": " + f.message).c_str() : "");
    std::fflush(stdout);
  }

  /// Redraws at most every 0.5 s. `running` are (point, stage, fraction, seconds so far).
  struct Running {
    Index point;
    std::string stage;
    double fraction, seconds;
  };
  void draw(const std::vector<Running>& running, const std::deque<Index>& queue,
            Clock::time_point t0) {
    if (!enabled_ || Clock::now() - last_ < std::chrono::milliseconds(500)) return;
    last_ = Clock::now();
    // Seconds per estimated second, learnt from the finished points of the same study (the
    // estimates of one method are off by about the same factor), else of all, else 1.
    const auto expected = [&](Index i) {
      const SweepPoint& p = c_.points[static_cast<std::size_t>(i)];
      const auto it = per_study_.find(p.study);
      const double scale = it != per_study_.end() ? it->second.second / it->second.first
                           : done_cost_ > 0       ? done_seconds_ / done_cost_
                                                  : 1.0;
      return scale * p.cost_seconds;
    };
    double work = 0, longest = 0;
    for (const Index i : queue) work += expected(i);
    for (const auto& r : running) {
      const double left = std::max(0.0, expected(r.point) - r.seconds);
      work += left;
      longest = std::max(longest, left);
    }
    const double left = std::max(longest, work / slots_);
    std::string line = concat("sweep ", c_.name, ": ", finished_, "/", to_run_, " points");
    for (const auto& r : running) {
      line += concat(" | ", c_.points[static_cast<std::size_t>(r.point)].key, " ", r.stage);
      if (r.fraction >= 0 && r.stage == "full simulation")
        line += concat(" ", std::lround(100 * r.fraction), "%");
    }
    line += concat(" | ", duration_text(seconds_since(t0)), " elapsed, ~", duration_text(left),
                   " left");
    winsize ws{};
    const std::size_t width =
        ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col - 1 : 159;
    if (line.size() > width) line = line.substr(0, width - 3) + "...";
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }

  void clear() {
    if (!drawn_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  static std::string format(const char* f, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
  }
  const SweepConfig& c_;
  bool enabled_, quiet_;
  int slots_;
  Index to_run_, finished_ = 0;
  double done_cost_ = 0, done_seconds_ = 0;
  std::map<std::string, std::pair<double, double>> per_study_;  ///< (estimated, measured) s
  Clock::time_point last_ = Clock::now() - std::chrono::seconds(1);
  bool drawn_ = false;
};

/// Holds an exclusive lock on the points directory for the life of the sweep.
class DirectoryLock {
 public:
  explicit DirectoryLock(const fs::path& dir) {
    const fs::path file = dir / ".lock";
    fd_ = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw IoError(concat("cannot create '", file.string(), "': ", std::strerror(errno)));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      close(fd_);
      throw IoError(concat("another mor sweep is running on '", dir.string(),
                           "' (its lock file .lock is held); wait for it or stop it"));
    }
  }
  ~DirectoryLock() { close(fd_); }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

/// Whether this rank's points folder is rank 0's. Rank 0 writes a mark no other sweep can have
/// into its folder and broadcasts it; a rank that reads the same mark back shares the folder, any
/// other ships its point files to rank 0. Host names cannot tell: cloned machines and containers
/// share one, and a folder of the same path may be private to each host. Any doubt (an unreadable
/// or stale mark) ships, which is always right; a shared folder only costs the copy.
class FolderMark {
 public:
  FolderMark(const fs::path& points_dir, bool root) : file_(points_dir / ".mpi-root") {
    if (!root) return;
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    std::snprintf(text_, sizeof text_, "%.255s %ld %lld", host_name().c_str(),
                  static_cast<long>(getpid()),
                  static_cast<long long>(std::chrono::nanoseconds(now).count()));
    std::ofstream out(file_, std::ios::trunc);
    out << text_;
    if (!out.flush()) throw IoError(concat("cannot write '", file_.string(), "'"));
  }
  void broadcast() { MPI_Bcast(text_, sizeof text_, MPI_CHAR, 0, MPI_COMM_WORLD); }
  bool shared() const {
    std::ifstream in(file_);
    std::string seen;
    return std::getline(in, seen) && seen == text_;
  }

 private:
  fs::path file_;
  char text_[320] = {};
};

void send_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> chunk(static_cast<std::size_t>(kChunk));
  while (in) {
    in.read(chunk.data(), kChunk);
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    MPI_Send(chunk.data(), static_cast<int>(n), MPI_CHAR, 0, kTagFile, MPI_COMM_WORLD);
  }
}

void receive_file(int source, std::int64_t bytes, const fs::path& file) {
  const fs::path tmp = file.string() + concat(".tmp-recv-", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    std::vector<char> chunk(static_cast<std::size_t>(std::min(bytes, kChunk)));
    for (std::int64_t got = 0; got < bytes;) {
      const int n = static_cast<int>(std::min(bytes - got, kChunk));
      MPI_Recv(chunk.data(), n, MPI_CHAR, source, kTagFile, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      out.write(chunk.data(), n);
      got += n;
    }
    if (!out) throw IoError(concat("cannot write '", tmp.string(), "'"));
  }
  fs::rename(tmp, file);
}

/// The other ranks: ask rank 0 for points, run them, send back what happened.
void run_worker_rank(const SweepConfig& c, const SweepRunOptions& o, int jobs, int threads,
                     bool ship) {
  LocalWorkers workers(c, o, threads);
  for (int k = 0; k < jobs; ++k) MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagReady, MPI_COMM_WORLD);
  int asked = jobs;  // READY messages not answered yet
  bool no_more = false, terminated = false;
  for (;;) {
    const bool stopping = o.stop_requested != nullptr && o.stop_requested->load();
    if (stopping && !terminated) {
      workers.terminate_all();
      terminated = true;
    }
    workers.read_progress();
    for (const Finished& f : workers.reap()) {
      const fs::path file =
          c.points_dir / (c.points[static_cast<std::size_t>(f.point)].key + ".h5");
      std::int64_t bytes = 0;
      if (f.status == kDone && ship) bytes = static_cast<std::int64_t>(fs::file_size(file));
      const std::int64_t header[4] = {f.point, f.status, bytes, ship ? 1 : 0};
      MPI_Send(header, 4, MPI_INT64_T, 0, kTagResult, MPI_COMM_WORLD);
      MPI_Send(f.message.data(), static_cast<int>(f.message.size()), MPI_CHAR, 0, kTagText,
               MPI_COMM_WORLD);
      if (bytes > 0) send_file(file);
      if (!no_more && !stopping) {
        MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagReady, MPI_COMM_WORLD);
        ++asked;
      }
    }
    int flag = 0;
    MPI_Iprobe(0, kTagAssign, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    while (flag) {
      std::int64_t index = -1;
      MPI_Recv(&index, 1, MPI_INT64_T, 0, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      --asked;
      if (index < 0) {
        no_more = true;
      } else if (stopping) {
        const std::int64_t header[4] = {index, kInterrupted, 0, 0};
        MPI_Send(header, 4, MPI_INT64_T, 0, kTagResult, MPI_COMM_WORLD);
        MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagText, MPI_COMM_WORLD);
      } else {
        workers.start(index);
      }
      MPI_Iprobe(0, kTagAssign, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    // Done when rank 0 said so (or we are stopping) and every point of ours has reported; rank 0
    // answers every READY, so the answers still owed are awaited first.
    if (workers.running() == 0 && asked == 0 && (no_more || stopping)) break;
    workers.wait(50);
  }
}

}  // namespace

std::function<void(const std::string&, double)> stage_reporter(int fd) {
  return [fd](const std::string& stage, double fraction) {
    const std::string line = concat(stage, "\t", fraction, "\n");
    [[maybe_unused]] const ssize_t n = write(fd, line.data(), line.size());
  };
}

SweepRunSummary run_sweep(const SweepConfig& c, const SweepRunOptions& o) {
  const auto t0 = Clock::now();
  MpiSession mpi(launched_by_mpirun());
  SweepRunSummary summary;
  summary.points = static_cast<Index>(c.points.size());
  summary.ranks = mpi.size();
  const int cores = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  const int ranks_here = mpi.active() ? env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1) : 1;
  require(o.jobs >= 0, c.source, ": jobs = ", o.jobs,
          "; run at least 1 point at once (0: the cores)");
  // More jobs than points run nothing more at once, and would only divide the memory budget
  // among points that never start.
  const int jobs =
      static_cast<int>(std::min<Index>(o.jobs > 0 ? o.jobs : std::max(1, cores / ranks_here),
                                       std::max<Index>(1, static_cast<Index>(c.points.size()))));
  summary.jobs = jobs;
  // Every rank checks the budget against what runs at once on its host: all refuse alike.
  check_memory_budget(c, jobs * ranks_here);
  const int threads = jobs * ranks_here > 1 ? 1 : 0;

  fs::create_directories(c.points_dir);
  FolderMark mark(c.points_dir, mpi.active() && mpi.rank() == 0);
  if (mpi.active()) mark.broadcast();
  if (mpi.rank() > 0) {
    run_worker_rank(c, o, jobs, threads, !mark.shared());
    // Matches rank 0's MPI_Ibarrier (a blocking barrier would not).
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
    return summary;
  }

  const DirectoryLock lock(c.points_dir);
  // The merged file, claimed for the whole sweep: another run or sweep writing it is refused now,
  // not at the merge (src/io/output_lock.hpp); the merge's writer joins this claim.
  const io::OutputLock output_lock(c.output);
  // Temporary files of runs that were killed: nothing else writes here while we hold the lock.
  for (const auto& entry : fs::directory_iterator(c.points_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) {
      std::error_code ignore;
      fs::remove(entry.path(), ignore);
    } else if (name.size() > 8 && name.compare(name.size() - 8, 8, ".h5.lock") == 0) {
      io::remove_stale_lock_file(entry.path());  // a point's claim whose worker was killed
    }
  }

  std::vector<PointOutcome> outcomes(c.points.size());
  std::vector<Index> to_run;
  for (const SweepPoint& p : c.points) {
    // A point file of ours that nothing can read (empty, cut short by a full disk or a kill at
    // its first bytes) is not done: it is kept aside, named, and the point runs again.
    if (const std::string notice = set_aside_unreadable_point_file(c, p); !notice.empty())
      std::fprintf(stderr, "mor: warning: %s\n", notice.c_str());
    if (!o.restart && completed_point_file(c, p)) {
      outcomes[static_cast<std::size_t>(p.index)].status = PointOutcome::Status::done;
      ++summary.stored;
    } else {
      to_run.push_back(p.index);
    }
  }
  // Largest first: the long points start early and the short ones fill the gaps.
  std::stable_sort(to_run.begin(), to_run.end(), [&](Index a, Index b) {
    return c.points[static_cast<std::size_t>(a)].cost_seconds >
           c.points[static_cast<std::size_t>(b)].cost_seconds;
  });
  // Parametric studies: each stored parametric model built (or found) once, before any point
  // runs; the points read it.
  std::set<std::string> models;
  for (const Index i : to_run) {
    const SweepPoint& p = c.points[static_cast<std::size_t>(i)];
    if (p.config.run_point.size() == 0 ||
        !models.insert(p.study + configuration_hash(offline_configuration(p.config))).second)
      continue;
    const auto tb = Clock::now();
    bool built = false;
    const StoredParametricModel s =
        stored_parametric_model(p.config, c.points_dir, p.study, true, &built);
    if (!o.quiet)
      std::printf("sweep %s: study %s: parametric model %s %s\n", c.name.c_str(), p.study.c_str(),
                  built ? concat("built in ", duration_text(seconds_since(tb)), ":").c_str()
                        : "stored, reused:",
                  s.file.string().c_str());
  }
  std::deque<Index> queue(to_run.begin(), to_run.end());
  if (!o.quiet && summary.stored > 0)
    std::printf("sweep %s: %lld of %lld points stored in %s, %lld to run\n", c.name.c_str(),
                static_cast<long long>(summary.stored), static_cast<long long>(summary.points),
                c.points_dir.string().c_str(), static_cast<long long>(to_run.size()));

  LocalWorkers workers(c, o, threads);
  SweepProgress progress(c, o, static_cast<Index>(to_run.size()), jobs * mpi.size());
  // The points out on other ranks: point -> (rank, start).
  std::map<Index, std::pair<int, Clock::time_point>> remote;
  std::vector<bool> rank_done(static_cast<std::size_t>(mpi.size()), false);
  int ranks_done = 1;  // rank 0 itself
  bool terminated = false;

  auto record = [&](const Finished& f, double seconds, int rank) {
    PointOutcome& out = outcomes[static_cast<std::size_t>(f.point)];
    if (f.status == kDone) {
      out.status = PointOutcome::Status::done;
      ++summary.ran;
    } else if (f.status == kFailed) {
      out.status = PointOutcome::Status::failed;
      out.message = f.message;
      ++summary.failed;
    }
    progress.finished(c.points[static_cast<std::size_t>(f.point)], f, seconds, rank);
  };

  for (;;) {
    const bool stopping = o.stop_requested != nullptr && o.stop_requested->load();
    if (stopping && !terminated) {
      workers.terminate_all();
      queue.clear();
      terminated = true;
      summary.interrupted = true;
    }
    workers.read_progress();
    for (const Finished& f : workers.reap()) record(f, f.seconds, 0);
    if (mpi.active()) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      while (flag) {
        const int source = st.MPI_SOURCE;
        if (st.MPI_TAG == kTagReady) {
          MPI_Recv(nullptr, 0, MPI_CHAR, source, kTagReady, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          std::int64_t index = -1;
          if (!queue.empty()) {
            index = queue.front();
            queue.pop_front();
            remote[index] = {source, Clock::now()};
          } else if (!rank_done[static_cast<std::size_t>(source)]) {
            rank_done[static_cast<std::size_t>(source)] = true;
            ++ranks_done;
          }
          MPI_Send(&index, 1, MPI_INT64_T, source, kTagAssign, MPI_COMM_WORLD);
        } else if (st.MPI_TAG == kTagResult) {
          std::int64_t header[4];
          MPI_Recv(header, 4, MPI_INT64_T, source, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Status text_status;
          MPI_Probe(source, kTagText, MPI_COMM_WORLD, &text_status);
          int length = 0;
          MPI_Get_count(&text_status, MPI_CHAR, &length);
          std::string message(static_cast<std::size_t>(length), '\0');
          MPI_Recv(message.data(), length, MPI_CHAR, source, kTagText, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
          Finished f{static_cast<Index>(header[0]), header[1], message, 0.0};
          const SweepPoint& p = c.points[static_cast<std::size_t>(f.point)];
          if (header[3] != 0 && header[2] > 0)
            receive_file(source, header[2], c.points_dir / (p.key + ".h5"));
          // Done only if the file is here to merge (a rank that took our folder for its own
          // would otherwise pass for done and leave the point pending in the merged file).
          if (f.status == kDone && !completed_point_file(c, p)) {
            f.status = kFailed;
            f.message =
                concat("rank ", source, " ran the point, but its results file did not reach ",
                       (c.points_dir / (p.key + ".h5")).string());
          }
          double seconds = 0;
          if (auto it = remote.find(f.point); it != remote.end()) {
            seconds = seconds_since(it->second.second);
            remote.erase(it);
          }
          if (f.status == kInterrupted) summary.interrupted = true;
          record(f, seconds, source);
        } else {
          throw IoError(concat("mor sweep: unexpected MPI message with tag ", st.MPI_TAG,
                               " from rank ", source));
        }
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      }
    }
    while (!stopping && !queue.empty() && workers.running() < static_cast<std::size_t>(jobs)) {
      workers.start(queue.front());
      queue.pop_front();
    }
    std::vector<SweepProgress::Running> running;
    for (const auto& ch : workers.children())
      running.push_back({ch.point, ch.stage, ch.fraction, seconds_since(ch.start)});
    for (const auto& [point, where] : remote)
      running.push_back({point, concat("on rank ", where.first), -1, seconds_since(where.second)});
    progress.draw(running, queue, t0);

    const bool local_idle = workers.running() == 0 && (queue.empty() || stopping);
    const bool remote_idle = remote.empty() && ranks_done == mpi.size();
    if (local_idle && (remote_idle || (stopping && remote.empty()))) break;
    workers.wait(50);
  }
  progress.clear();
  if (mpi.active()) {
    // Every rank has left its loop once the barrier completes; until then a READY may still be
    // on its way, and it is answered.
    {
      MPI_Request barrier;
      MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
      for (int finished = 0; !finished;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, kTagReady, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
          MPI_Recv(nullptr, 0, MPI_CHAR, st.MPI_SOURCE, kTagReady, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
          const std::int64_t none = -1;
          MPI_Send(&none, 1, MPI_INT64_T, st.MPI_SOURCE, kTagAssign, MPI_COMM_WORLD);
        }
        MPI_Test(&barrier, &finished, MPI_STATUS_IGNORE);
        if (!finished) poll(nullptr, 0, 5);
      }
    }
  }
  write_sweep_results(c, outcomes, o.command_line);
  summary.merged = true;
  summary.seconds = seconds_since(t0);
  return summary;
}

}  // namespace mor::experiments
