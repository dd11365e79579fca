// SPDX-License-Identifier: GPL-3.0-or-later
// `mor`: the command-line program. The only place that turns errors into messages and exit
// codes:  0 success,  2 bad input (experiment file, option, missing or foreign file),
//         3 numerical failure (divergence, Newton, singular matrix),  4 plotting failed (results
//         are complete),  130 interrupted (SIGINT/SIGTERM; nothing written),  1 anything else.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/multibody_run.hpp"
#include "src/core/errors.hpp"
#include "src/core/version.hpp"

namespace {

// Set by SIGINT/SIGTERM; the run stops at its next step and removes its temporary file.
std::atomic<bool> g_stop_requested{false};
extern "C" void request_stop(int) {
  g_stop_requested.store(true);
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs experiments/plot_results.py with Debian's python (which has matplotlib and h5py).
int make_plots(const std::filesystem::path& results) {
  const std::filesystem::path script =
      std::filesystem::path(MOR_SOURCE_DIR) / "experiments" / "plot_results.py";
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

void print_multibody_summary(const mor::experiments::MultibodyExperimentConfig& c,
                             const mor::experiments::MultibodyRunSummary& s) {
  std::printf("mor: wrote %s\n", s.results.string().c_str());
  std::printf(
      "     %s: %g s of motion with CVODE %s (rtol %g, atol %g): %ld steps, CPU %.4f s "
      "(wall %.4f s)\n",
      s.title.c_str(), c.cvode.t_end, std::string(mor::to_string(c.cvode.method)).c_str(),
      c.cvode.rtol, c.cvode.atol, s.cvode.steps, s.cpu_seconds, s.wall_seconds);
  std::printf("     energy E0 = %.6g J, max |E - E0 - W| = %.3g J", s.energy_initial,
              s.energy_balance_error);
  if (s.constraint_residual > 0)
    std::printf(", max constraint residual %.3g m", s.constraint_residual);
  std::printf("\n     accuracy:");
  if (s.exact_error >= 0) std::printf(" max |y - y_exact| = %.3g;", s.exact_error);
  if (s.reference_difference >= 0)
    std::printf(" max |y - y_ref| = %.3g (ref: tolerances / %g)", s.reference_difference,
                c.reference_factor);
  std::printf("\n");
  if (s.linear_order > 0) {
    std::printf("     linearised: n = %lld", static_cast<long long>(s.linear_order));
    if (s.linear_difference >= 0)
      std::printf(
          ", nonlinear against linear under [input]: relative difference %.3g, "
          "%.3fx smaller at half the amplitude (>= 2: right to second order)",
          s.linear_difference, s.linear_ratio);
    std::printf("\n");
  }
  if (s.reduced_order > 0) {
    std::printf("     reduced (%s): r = %lld, relative output error %.3g",
                c.reduction.method.c_str(), static_cast<long long>(s.reduced_order),
                s.reduced_error);
    if (s.h2_error_relative >= 0) std::printf(", relative H2 error %.3g", s.h2_error_relative);
    if (s.hinf_error >= 0) std::printf(", Hinf error %.3g", s.hinf_error);
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
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

  CLI::App* info = app.add_subcommand("info", "Summarise a results file");
  std::string results_file;
  info->add_option("results", results_file, "results file (.h5) written by mor run")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

  try {
    if (*run) {
      if (!output.empty()) overrides.push_back("experiment.output=\"" + output + "\"");
      mor::experiments::RunOptions options;
      options.progress = progress || (!quiet && isatty(STDERR_FILENO));
      options.command_line = command_line;
      options.stop_requested = &g_stop_requested;
      std::signal(SIGINT, request_stop);
      std::signal(SIGTERM, request_stop);
      if (mor::experiments::is_multibody_experiment(experiment_file, overrides)) {
        const auto config = mor::experiments::load_multibody_experiment(experiment_file, overrides);
        const auto s = mor::experiments::run_multibody_experiment(config, options);
        if (!quiet) print_multibody_summary(config, s);
        if (config.plots && !no_plots) return make_plots(s.results);
        return 0;
      }
      const auto config = mor::experiments::load_experiment(experiment_file, overrides);
      const auto s = mor::experiments::run_experiment(config, options);
      if (!quiet) {
        std::printf("mor: wrote %s\n", s.results.string().c_str());
        std::printf(
            "     N = %lld, %lld steps of %s (dt = %g), %lld outputs, %lld snapshots\n"
            "     %.3f s total (setup %.3f s, stepping %.3f s, writing %.3f s), "
            "%.2f ns per step per mass, peak memory %.0f MiB\n",
            static_cast<long long>(config.model.N), static_cast<long long>(s.stats.steps),
            std::string(mor::to_string(config.integrator.scheme)).c_str(), config.integrator.dt,
            static_cast<long long>(s.outputs), static_cast<long long>(s.snapshots), s.total_seconds,
            s.setup_seconds, s.stats.seconds - s.write_seconds, s.write_seconds,
            1e9 * (s.stats.seconds - s.write_seconds) / static_cast<double>(s.stats.steps) /
                static_cast<double>(config.model.N),
            s.peak_rss_mb);
        if (s.reduced_order > 0) {
          std::printf(
              "     reduced (%s): r = %lld in %.3f s; reduced run %.3f s; relative output "
              "error %.3g",
              config.reduction.method.c_str(), static_cast<long long>(s.reduced_order),
              s.reduction_seconds, s.reduced_stats.seconds, s.output_error_relative);
          if (s.h2_error_relative >= 0)
            std::printf(", relative H2 error %.3g", s.h2_error_relative);
          if (s.hinf_error >= 0) std::printf(", Hinf error %.3g", s.hinf_error);
          if (s.state_error_relative >= 0)
            std::printf(", relative state error %.3g", s.state_error_relative);
          if (s.speedup_per_step > 0) std::printf(", %.3gx faster per step", s.speedup_per_step);
          std::printf("\n");
        }
        std::fflush(stdout);
      }
      if (config.plots && !no_plots) return make_plots(s.results);
      return 0;
    }
    if (*info) {
      mor::experiments::print_results_info(results_file, std::cout);
      return 0;
    }
  } catch (const mor::Interrupted& e) {
    std::cerr << "mor: " << e.what() << "; no results written\n";
    return 130;
  } catch (const mor::NumericalError& e) {
    std::cerr << "mor: numerical failure: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    // Bad input (InvalidArgument, IoError: files the user named) is exit 2; anything else 1.
    const bool bad_input =
        dynamic_cast<const mor::InvalidArgument*>(&e) || dynamic_cast<const mor::IoError*>(&e);
    std::cerr << "mor: error: " << e.what() << "\n";
    return bad_input ? 2 : 1;
  }
  return 0;
}
