// SPDX-License-Identifier: GPL-3.0-or-later
// `mor`: the command-line program. The only place that turns errors into messages and exit
// codes:  0 success,  2 bad input (experiment file, option, missing or foreign file),
//         3 numerical failure (divergence, Newton, singular matrix),  4 plotting failed (results
//         are complete),  130 interrupted (SIGINT/SIGTERM/SIGHUP; nothing written),  1 anything
//         else. Output that cannot be written to stdout (a full disk, /dev/full) is exit 2.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "experiments/runner/catalog.hpp"
#include "experiments/runner/estimates.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/export.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/ordered_tasks.hpp"
#include "experiments/runner/pipeline.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/run_guards.hpp"
#include "experiments/runner/summary.hpp"
#include "experiments/runner/sweep.hpp"
#include "experiments/runner/sweep_run.hpp"
#include "experiments/runner/training_ranks.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/version.hpp"
#include "src/io/contained.hpp"
#include "src/io/output_lock.hpp"
#include "src/io/results.hpp"

namespace {

/// The memory estimate (MiB) of the run this process makes, once its guards accepted it; < 0
/// before that. An allocation that fails afterwards is named against it.
double g_run_estimate_mib = -1.0;

// SIGINT/SIGTERM/SIGHUP set the process-wide flag (src/core/interrupt.hpp), which every long
// loop polls: the run stops within one step or iteration and removes its temporary file.
extern "C" void request_stop(int) {
  mor::g_stop_requested.store(true);
}

/// Runs, sweeps and exports stop on SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh
/// session), leaving nothing behind. A SIGHUP ignored from the start (nohup) stays ignored.
void stop_on_signals() {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  struct sigaction hup {};
  if (::sigaction(SIGHUP, nullptr, &hup) == 0 && hup.sa_handler != SIG_IGN)
    std::signal(SIGHUP, request_stop);
}

/// Flushes stdout: what was printed but could not be written (a full disk, /dev/full, a closed
/// terminal) turns a success into exit 2 with one line on stderr.
int finish_stdout(int code) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && std::ferror(stdout) == 0) return code;
  std::fprintf(stderr, "mor: error: cannot write to standard output%s%s\n", err != 0 ? ": " : "",
               err != 0 ? std::strerror(err) : "");
  return code == 0 ? 2 : code;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs experiments/<script> with Debian's python (which has matplotlib and h5py).
int make_plots(const std::filesystem::path& results, const char* script_name = "plot_results.py") {
  const std::filesystem::path script =
      std::filesystem::path(MOR_SOURCE_DIR) / "experiments" / script_name;
  const std::string cmd =
      "/usr/bin/python3 " + shell_quote(script.string()) + " " + shell_quote(results.string());
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::cerr << "mor: plotting failed (" << cmd << " exited with " << rc << "); the results file "
              << results.string() << " is complete\n";
    return 4;
  }
  return 0;
}

/// Where plot_results.py puts the figures of a results file: <stem>_plots next to it.
std::filesystem::path plots_dir(const std::filesystem::path& results) {
  return results.parent_path() / (results.stem().string() + "_plots");
}

/// `mor sweep --list`: the grid with the estimates that schedule it and guard its memory.
void list_sweep(const mor::experiments::SweepConfig& c, int jobs) {
  const int at_once =
      jobs > 0 ? jobs : std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  const double budget = mor::experiments::point_memory_budget_mib(c, at_once);
  std::printf("sweep %s (%s): %zu points, results %s, points in %s\n", c.name.c_str(),
              c.source.c_str(), c.points.size(), c.output.string().c_str(),
              c.points_dir.string().c_str());
  std::printf("  %-32s %9s  %-13s %10s %10s  %s\n", "point", "N", "method", "est. time", "est. MiB",
              "stored");
  double total = 0;
  for (const auto& p : c.points) {
    const bool stored = mor::experiments::completed_point_file(c, p).has_value();
    if (!stored) total += p.cost_seconds;
    std::printf("  %-32s %9lld  %-13s %9.1fs %10.0f  %s%s\n", p.key.c_str(),
                static_cast<long long>(p.size), p.method.c_str(), p.cost_seconds, p.memory_mib,
                stored ? "yes" : "no",
                p.memory_mib > budget ? "  (above the budget: refused)" : "");
  }
  std::printf(
      "  about %.0f s of work left on one core (estimates); memory budget %.0f MiB per point "
      "with %d at once\n",
      total, budget, at_once);
}

}  // namespace

static int run_command(int argc, char** argv) {
  CLI::App app{
      "mor: model order reduction of large sparse mechanical systems.\n"
      "Simulates full-order models from experiment files and stores results in HDF5."};
  app.add_flag_callback(
      "--version",
      [] {
        std::cout << "mor " << mor::program_version() << " (git " << mor::git_commit() << ")\n";
        throw CLI::Success();
      },
      "Print the version and git commit and exit");
  app.require_subcommand(1);

  CLI::App* run =
      app.add_subcommand("run", "Run an experiment file (TOML) and write its results (HDF5)");
  std::string experiment_file, output;
  std::vector<std::string> overrides;
  bool no_plots = false, progress = false, quiet = false;
  run->add_option("experiment", experiment_file, "experiment file, e.g. experiments/default.toml")
      ->required();
  run->add_option("-o,--output", output, "results file (default: experiment.output)");
  run->add_option("-s,--set", overrides,
                  "override a setting, e.g. --set model.N=100000 --set simulation.integrator=rk4");
  run->add_flag("--no-plots", no_plots, "do not make the PNG plots");
  run->add_flag("--progress", progress, "show progress on stderr (default: when it is a terminal)");
  run->add_flag("-q,--quiet", quiet, "print nothing but errors");
  int run_jobs = 1;
  run->add_option("-j,--jobs", run_jobs,
                  "training runs at once of a parametric reduction ([parameters]: the full runs at "
                  "the training points, the linear methods' local reductions; 0: the cores; the "
                  "result does not depend on it)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& value) {
            return std::atoi(value.c_str()) >= 0 &&
                           value.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "must be a number of training runs at once (0: the cores), got " + value;
          },
          "JOBS"));
  bool dry_run = false;
  run->add_flag("--dry-run", dry_run,
                "check the experiment file, print the resolved configuration (every default "
                "filled in) and the time and memory estimates, and run nothing");

  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "Run a sweep file (TOML): a grid of experiments, each point reduced, simulated full and "
      "reduced, and compared; one merged results file with the table. Resumes an interrupted "
      "sweep; runs points in parallel, and over the ranks of mpirun -np K");
  std::string sweep_file, worker_key;
  std::vector<std::string> sweep_overrides;
  int jobs = 0, progress_fd = -1;
  bool restart = false, extended = false, list = false;
  sweep->add_option("sweep", sweep_file, "sweep file, e.g. experiments/default_sweep.toml")
      ->required();
  sweep->add_option("-s,--set", sweep_overrides,
                    "override a setting: sweep.KEY changes the sweep (e.g. "
                    "--set 'sweep.N=[100,1000]'), any other TABLE.KEY every point (e.g. "
                    "--set simulation.t_end=50)");
  sweep
      ->add_option("-j,--jobs", jobs,
                   "points at once in this process (default: the cores; under mpirun, the "
                   "cores over the ranks on the host)")
      // Not CLI::PositiveNumber: its message prints the range of a double (309 digits).
      ->check(CLI::Validator(
          [](const std::string& value) {
            return std::atoi(value.c_str()) >= 1
                       ? std::string()
                       : "must be a positive number of points at once, got " + value;
          },
          "POSITIVE"));
  sweep->add_flag("--restart", restart, "run every point again, ignoring stored ones");
  sweep->add_flag("--extended", extended,
                  "add the larger sizes of sweep.extended_N (e.g. 10^6) to sweep.N");
  sweep->add_flag("--list", list,
                  "list the points (estimated time and memory, stored or not) and run nothing");
  sweep->add_flag("--no-plots", no_plots, "do not make the PNG plots");
  sweep->add_flag("--progress", progress,
                  "show a progress line on stderr (default: when it is a terminal)");
  sweep->add_flag("-q,--quiet", quiet, "print nothing but errors");
  // The worker processes of a sweep run one point each (internal).
  sweep->add_option("--worker", worker_key)->group("");
  sweep->add_option("--progress-fd", progress_fd)->group("");

  CLI::App* lister = app.add_subcommand(
      "list",
      "List what mor knows: model kinds, reduction methods, measures, integrators, input signals");
  std::string list_topic;
  lister->add_option("what", list_topic,
                     "models, methods, measures, integrators or inputs (default: all)");

  CLI::App* keys = app.add_subcommand(
      "keys", "Print every experiment-file key with its type, default, unit and meaning");
  std::string keys_table;
  bool keys_markdown = false;
  keys->add_option("table", keys_table,
                   "one table, e.g. simulation or reduction (default: all tables)");
  keys->add_flag("--markdown", keys_markdown, "as Markdown (the text of docs/keys.md)");
  std::string keys_file;
  keys->add_option("--file", keys_file,
                   "experiment (default) or sweep: the kind of file whose keys");

  CLI::App* layout = app.add_subcommand(
      "layout", "Print the layout of results files: every HDF5 group and dataset, what it holds");
  bool layout_markdown = false;
  layout->add_flag("--markdown", layout_markdown,
                   "as Markdown (the text of docs/results-layout.md)");
  bool layout_python = false;
  layout->add_flag("--python", layout_python,
                   "as the Python module python/mor_layout.py (the results reader's PATHS)");

  CLI::App* info = app.add_subcommand("info", "Summarise a results file (or a sweep's table)");
  std::string results_file;
  info->add_option("results", results_file, "results file (.h5) written by mor run")->required();

  CLI::App* exporter = app.add_subcommand(
      "export",
      "Write the reduced model of a results file (.h5), or the full model of an experiment file "
      "(.toml), as MATLAB .mat or MatrixMarket files for MATLAB, SciPy, pyMOR or M.E.S.S.");
  std::string export_source, export_format = "mat", export_out;
  std::vector<std::string> export_overrides;
  exporter->add_option("source", export_source, "results file (.h5) or experiment file (.toml)")
      ->required();
  exporter
      ->add_option("--format", export_format,
                   "mat (MATLAB v5; scipy.io.loadmat reads it), mat73 (MATLAB v7.3) or mtx "
                   "(MatrixMarket, one file a matrix)")
      ->capture_default_str();
  exporter->add_option("--out", export_out, "the .mat file, or the prefix P of P.<matrix>.mtx")
      ->required();
  exporter->add_option("-s,--set", export_overrides,
                       "override a setting of the experiment file, e.g. --set model.N=100000");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

  try {
    if (*run) {
      mor::experiments::require_nonempty_output(run->count("--output") > 0, output, "-o/--output");
      mor::experiments::require_regular_file(experiment_file, "experiment file");
      if (!output.empty()) overrides.push_back("experiment.output=\"" + output + "\"");
      mor::experiments::RunOptions options;
      options.progress = progress || (!quiet && isatty(STDERR_FILENO));
      options.command_line = command_line;
      options.stop_requested = &mor::g_stop_requested;
      stop_on_signals();
      auto config = mor::experiments::load_experiment(experiment_file, overrides);
      config.training_jobs = mor::experiments::resolve_jobs(run_jobs);
      if (dry_run) {
        mor::experiments::print_dry_run(config, stdout);
        return 0;
      }
      // Under mpirun the other ranks serve rank 0's training runs (and local reductions) and
      // write nothing; rank 0 runs the experiment (experiments/runner/training_ranks.hpp).
      mor::experiments::TrainingRanks ranks;
      if (ranks.rank() > 0) {
        ranks.serve([&](mor::experiments::RemoteTask kind, mor::experiments::Bytes& task) {
          return kind == mor::experiments::RemoteTask::training_run
                     ? mor::experiments::run_remote_training_run(config, task,
                                                                 &mor::g_stop_requested)
                     : mor::experiments::run_remote_local_reduction(config, task,
                                                                    &mor::g_stop_requested);
        });
        return 0;
      }
      // Claimed for the whole run, before the model is built: a second run writing the same file
      // is refused at once, not after its work (src/io/output_lock.hpp).
      const mor::io::OutputLock output_lock(config.output);
      mor::io::require_replaceable_by_results(config.output);
      g_run_estimate_mib = mor::experiments::estimate_run_mib(config);
      if (const auto warning = mor::experiments::check_run(config); !warning.empty())
        std::cerr << "mor: warning: " << warning << "\n";
      const auto s = mor::experiments::run_experiment(config, options);
      const bool plots = config.plots && !no_plots;
      if (!quiet)
        mor::experiments::print_run_summary(config, s, plots ? plots_dir(s.results) : "", stdout);
      if (!plots) return 0;
      // The overview figure (outputs, error over time, decay) first: it is what a run shows.
      if (s.reduced_order > 0 && make_plots(s.results, "plot_overview.py") != 0) return 4;
      return make_plots(s.results);
    }
    if (*sweep) {
      stop_on_signals();
      if (extended) sweep_overrides.push_back("sweep.extended=true");
      mor::experiments::require_regular_file(sweep_file, "sweep file");
      const auto config = mor::experiments::load_sweep(sweep_file, sweep_overrides);
      if (!worker_key.empty()) {
        // One point, in a process of its own; the parent reads the results file it leaves.
        const auto point = std::find_if(config.points.begin(), config.points.end(),
                                        [&](const auto& p) { return p.key == worker_key; });
        if (point == config.points.end())
          throw mor::InvalidArgument("sweep " + sweep_file + " has no point '" + worker_key + "'");
        mor::experiments::RunOptions options;
        options.command_line = command_line;
        options.stop_requested = &mor::g_stop_requested;
        if (progress_fd >= 0) options.report_stage = mor::experiments::stage_reporter(progress_fd);
        g_run_estimate_mib = point->memory_mib;
        mor::experiments::run_sweep_point(config, *point, options);
        return 0;
      }
      if (list) {
        list_sweep(config, jobs);
        return 0;
      }
      mor::io::require_replaceable_by_results(config.output);
      mor::experiments::SweepRunOptions options;
      options.jobs = jobs;
      options.quiet = quiet;
      options.progress = progress || (!quiet && isatty(STDERR_FILENO));
      options.restart = restart;
      options.command_line = command_line;
      options.program = std::filesystem::read_symlink("/proc/self/exe");
      options.worker_arguments = {"sweep", sweep_file};
      for (const auto& o : sweep_overrides)
        options.worker_arguments.insert(options.worker_arguments.end(), {"--set", o});
      options.stop_requested = &mor::g_stop_requested;
      const auto s = mor::experiments::run_sweep(config, options);
      if (!s.merged) return 0;  // another rank than 0 under mpirun: rank 0 reports
      mor::experiments::remove_point_leftovers(config);
      if (!quiet) {
        mor::experiments::print_sweep_info(mor::io::ResultsReader(config.output), std::cout);
        std::printf(
            "\nmor: wrote %s (and the table as %s); %lld points stored before, %lld run now "
            "in %.1f s (%d rank%s x %d job%s)\n",
            config.output.string().c_str(),
            std::filesystem::path(config.output).replace_extension(".csv").string().c_str(),
            static_cast<long long>(s.stored), static_cast<long long>(s.ran), s.seconds, s.ranks,
            s.ranks == 1 ? "" : "s", s.jobs, s.jobs == 1 ? "" : "s");
        std::fflush(stdout);
      }
      if (s.interrupted) {
        std::cerr << "mor: interrupted; the completed points are kept in "
                  << config.points_dir.string() << ": run the same command again to resume\n";
        return 130;
      }
      if (s.failed > 0) {
        std::cerr << "mor: " << s.failed << " point" << (s.failed == 1 ? "" : "s")
                  << " failed (see the status column); rerunning retries them\n";
        return 3;
      }
      if (config.plots && !no_plots) return make_plots(config.output, "plot_sweep.py");
      return 0;
    }
    if (*exporter) {
      stop_on_signals();
      const auto format = mor::experiments::parse_export_format(export_format);
      const std::filesystem::path source(export_source);
      mor::experiments::require_regular_file(source, "export source");
      if (!export_out.empty()) mor::experiments::require_export_out(export_out, format);
      // A results file's reduced model is fixed: an override cannot change it, and ignoring one
      // would export something else than asked.
      if (source.extension() != ".toml" && !export_overrides.empty())
        throw mor::InvalidArgument("mor export: --set '" + export_overrides.front() +
                                   "' applies to an experiment file's model, but '" +
                                   export_source +
                                   "' is a results file, whose reduced model is fixed; drop "
                                   "--set, or export the experiment file (or rerun it with --set)");
      // Before any work: the .mat file named (each file of a MatrixMarket set is checked once its
      // names are known); then what killed exports to the same files left.
      if (format != mor::experiments::ExportFormat::mtx && !export_out.empty())
        mor::experiments::require_replaceable_by_export(export_out, format);
      if (!export_out.empty()) mor::experiments::remove_dead_export_temporaries(export_out, format);
      if (source.extension() == ".toml") {
        for (const auto& f : mor::experiments::export_experiment_model(source, export_overrides,
                                                                       format, export_out))
          std::printf("mor: wrote %s\n", f.string().c_str());
        return 0;
      }
      // A results file is read in a child process, as by `mor info` (HDF5 may crash or loop on a
      // damaged file), under the plain read limit: the child only reads and checks, and this
      // process writes what it hands over (export_results).
      for (const auto& f : mor::experiments::export_results(source, format, export_out,
                                                            mor::io::results_read_time_limit()))
        std::printf("mor: wrote %s\n", f.string().c_str());
      return 0;
    }
    if (*lister) {
      mor::experiments::print_list(list_topic, std::cout);
      return 0;
    }
    if (*layout) {
      if (layout_python)
        mor::experiments::layout::print_python(std::cout);
      else
        mor::experiments::layout::print(layout_markdown, std::cout);
      return 0;
    }
    if (*keys) {
      mor::experiments::print_keys(keys_file, keys_table, keys_markdown, std::cout);
      return 0;
    }
    if (*info) {
      // In a child process: a crash or an endless loop of HDF5 on a damaged file becomes
      // "damaged results file: ..." and exit 2 (src/io/contained.hpp).
      const std::filesystem::path file(results_file);
      std::cout << mor::io::read_contained(
          file, "results file", [&](std::ostream& out) { mor::experiments::print_info(file, out); },
          mor::io::results_read_time_limit());
      return 0;
    }
  } catch (const mor::Interrupted& e) {
    std::cerr << "mor: " << e.what() << (*exporter ? "; nothing written" : "; no results written")
              << "\n";
    return 130;
  } catch (const mor::NumericalError& e) {
    std::cerr << "mor: numerical failure: " << e.what() << "\n";
    return 3;
  } catch (const std::filesystem::filesystem_error& e) {
    // A folder or file the user named that cannot be made or read (e.g. a read-only folder).
    std::cerr << "mor: error: " << mor::experiments::describe(e) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // Runs are checked against their memory estimate before they start (run_guards); what
    // still fails to allocate is a model larger than the estimate knew, or a busy machine.
    if (g_run_estimate_mib >= 0.0)
      std::cerr << "mor: error: out of memory (an allocation failed), although the run's "
                   "estimate of about "
                << std::llround(g_run_estimate_mib) << " MiB was within this machine's budget of "
                << std::llround(mor::experiments::run_memory_budget_mib())
                << " MiB: the estimate missed what this run allocates, or other processes took "
                   "the memory; make the model or what the run keeps (horizon, snapshots, "
                   "training) smaller\n";
    else
      std::cerr << "mor: error: out of memory (an allocation failed); `mor run FILE --dry-run` "
                   "prints a run's memory estimate against this machine's memory\n";
    return 1;
  } catch (const std::exception& e) {
    // Bad input (InvalidArgument, IoError: files the user named) is exit 2; anything else 1.
    const bool bad_input =
        dynamic_cast<const mor::InvalidArgument*>(&e) || dynamic_cast<const mor::IoError*>(&e);
    std::cerr << "mor: error: " << e.what() << "\n";
    return bad_input ? 2 : 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  // Not a terminal: one buffer for everything the commands print (it is fully buffered anyway),
  // so that a failing write happens in finish_stdout's flush, where its reason is known.
  static char stdout_buffer[1 << 18];
  if (!isatty(STDOUT_FILENO)) std::setvbuf(stdout, stdout_buffer, _IOFBF, sizeof stdout_buffer);
  const int code = finish_stdout(run_command(argc, argv));
  // A stop may have abandoned a long LAPACK call on a thread of its own (run_abandonable):
  // OpenBLAS's exit handler could then wait forever for its worker threads. Everything is
  // written, closed and flushed by now, so the exit handlers are skipped.
  if (mor::abandoned_threads_running()) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}
