// What each subcommand's exit codes mean, for the footer of its --help: the meanings every subcommand shares
// (main.cpp's parse errors, ConfigError and other exceptions) and each command's own, composed into one line
// per code. docs/cli.md says the same in prose.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"

namespace ptxbench {

struct ExitCodeMeaning {
  ExitCode code;
  std::string_view meaning;
};

struct CommandExitCodes {
  std::string_view command;  // as typed after ptxbench: "eval", "fixit export"; "" for ptxbench itself
  std::vector<ExitCodeMeaning> own;  // the codes only this command returns, or what a shared code adds for it
  std::string_view note = {};        // a last line, after the codes
};

// Every subcommand: CLI11's parse errors (2), a ConfigError (4: find_project's, at the least), any other
// exception or a standard output that could not be written (5).
inline const std::vector<ExitCodeMeaning> kEveryCommandExitCodes = {
    {kExitUsage, "bad arguments (an unknown option, a missing or malformed value)"},
    {kExitConfig, "no project folder (--root)"},
    {kExitHarness, "ptxbench itself failed: an internal error, or standard output could not be written"},
};

inline const std::vector<CommandExitCodes> kCommandExitCodes = {
    {"",
     {{kExitOk, "done"},
      {kExitRejected,
       "judged and failed: the submission (compile, eval), a verdict against its manifest's expectation (run "
       "--solutions), a shipped solution's last verdict (run --model reference)"},
      {kExitUsage,
       "what the arguments name does not exist or cannot be used (a task, a run, a solution file, a model)"},
      {kExitIncomplete,
       "nothing failed, but stages were skipped (eval); nothing was exported (fixit export, fixit build)"},
      {kExitConfig,
       "a broken task file, solutions manifest or model catalogue, or a numeric $PTXBENCH_* setting that is "
       "not a whole number"},
      {kExitHarness,
       "it could not judge (no nvcc, a full disk, a results store it cannot write), or a model or judge "
       "error stopped a run (resume it)"}},
     "Each subcommand's --help lists the codes it returns and what each means for it."},
    {"tasks",
     {{kExitOk, "the tasks were listed, or the task shown"},
      {kExitUsage, "no task with that id"},
      {kExitConfig, "a broken task file"}}},
    {"compile",
     {{kExitOk, "it compiled, and the static checks passed"},
      {kExitRejected, "a compile error, or the static checks failed (forbidden means)"},
      {kExitUsage,
       "no task with that id, a track the task does not accept or the file's extension contradicts, or a "
       "solution file that cannot be read or is not a regular file of at most 1 MiB"},
      {kExitConfig, "a broken task file, or a numeric $PTXBENCH_* setting that is not a whole number"},
      {kExitHarness,
       "the host failed the compile: no nvcc, a full disk, a cache folder that cannot be written"}}},
    {"eval",
     {{kExitOk, "every stage passed"},
      {kExitRejected, "the submission was judged and failed"},
      {kExitUsage,
       "no task with that id, a track the task does not accept or the file's extension contradicts, or a "
       "solution file that cannot be read or is not a regular file of at most 1 MiB"},
      {kExitIncomplete,
       "nothing failed, but stages were skipped (no GPU here, --cpu-only, --stages, or a static-only task)"},
      {kExitConfig, "a broken task file, or a numeric $PTXBENCH_* setting that is not a whole number"},
      {kExitHarness,
       "it could not judge (no nvcc, the host failed the compile: a full disk, a cache folder that cannot be "
       "written), or the results store cannot be opened or written (unless --no-store)"}}},
    {"run",
     {{kExitOk,
       "every trajectory ended (--model reference: and no shipped solution's last verdict failed); with "
       "--solutions: every verdict is as its manifest entry expects"},
      {kExitRejected,
       "--model reference: a shipped solution's last verdict failed; with --solutions: a verdict differs "
       "from its expectation"},
      {kExitUsage,
       "an unknown model, architecture or knowledge level, no task that matches and accepts the track, an "
       "option of the other mode, --resume of no such run, of one that another process drives, or of a "
       "manifest run begun by another ptxbench or on another GPU, more --gpus than here, a bad --evaluator "
       "URL or token; with --solutions: no entry applies to a matching task"},
      {kExitConfig,
       "a broken task file, solutions manifest (an entry's file unreadable or over 1 MiB) or model "
       "catalogue, or a numeric $PTXBENCH_* setting that is not a whole number"},
      {kExitHarness,
       "a trajectory stopped on a model or judge error (with --evaluator: the service unreachable for 10 "
       "minutes, no worker taking a job in time, or no verdict for a job): continue it with run --resume N; "
       "or the results store cannot be opened or written"}}},
    {"results",
     {{kExitOk, "shown (with --export: written)"},
      {kExitUsage,
       "no results store yet, no such evaluation or run, --export without --run N of an agent run"},
      {kExitHarness, "--export's file could not be written (a symbolic link is refused)"}}},
    {"report",
     {{kExitOk, "the report was written"},
      {kExitUsage,
       "no results store yet, an unknown or non-agent run, nothing matches the selection, an --out folder "
       "that cannot be made or written"},
      {kExitConfig, "a broken task file"},
      {kExitHarness, "a report file could not be written once the folder was checked (a full disk)"}}},
    {"cache",
     {{kExitOk, "the cache was shown (with --prune: brought within its limit first)"},
      {kExitConfig, "a numeric $PTXBENCH_* setting that is not a whole number ($PTXBENCH_CACHE_LIMIT_MB)"}}},
    {"fixit",
     {{kExitOk, "done"},
      {kExitUsage, "no subcommand; a run that is not there or not of the kind the subcommand takes"},
      {kExitIncomplete, "export, build: nothing was exported"},
      {kExitConfig,
       "a broken task file or model catalogue, or a numeric $PTXBENCH_* setting that is not a whole number"},
      {kExitHarness,
       "repair, reason, build: a model or judge error stopped the work (repair --resume N, reason --resume "
       "N, or the same build again continues it)"}},
     "Each fixit subcommand's --help lists its own."},
    {"fixit mine",
     {{kExitOk, "the mined set was stored as a run (even an empty one)"},
      {kExitUsage,
       "--correct with --error-classes, a class that is not a failed turn's with code, a run that is no "
       "agent run or (named in --runs) not a CUDA one"},
      {kExitConfig, "a broken task file"},
      {kExitHarness, "the results store cannot be opened or written"}}},
    {"fixit repair",
     {{kExitOk, "every failure's trajectory ended, fixed or not (only verified fixes count)"},
      {kExitUsage,
       "no --mined and --teacher (or --resume), a run that is no mined set or repair run, a mined set of "
       "verified turns, an unknown teacher, a run another process drives"},
      {kExitConfig,
       "a broken task file or model catalogue, or a numeric $PTXBENCH_* setting that is not a whole number"},
      {kExitHarness,
       "a trajectory stopped on a model or judge error: continue it with fixit repair --resume N; or the "
       "results store cannot be opened or written"}}},
    {"fixit reason",
     {{kExitOk, "every verified fix was asked about (reasonings accepted or refused)"},
      {kExitUsage,
       "no --repair-run and --reasoner (or --resume), a run that is no repair or reasoning run, an unknown "
       "reasoner, --min-chars not below --max-chars, a run another process drives"},
      {kExitConfig, "a broken task file or model catalogue"},
      {kExitHarness,
       "a fix's reasoning stopped on a model error: continue with fixit reason --resume N; or the results "
       "store cannot be opened or written"}}},
    {"fixit export",
     {{kExitOk, "examples were written to --out"},
      {kExitUsage,
       "no results store yet, not exactly one of --repair-run and --mined, a run that is not of the kind its "
       "option takes"},
      {kExitIncomplete,
       "nothing was exported (no verified fix, none with an accepted reasoning, an empty mined set): the "
       "files are written but hold no example, which is no data set"},
      {kExitConfig, "a broken task file"},
      {kExitHarness,
       "a stored example that does not hold up (its evaluation did not pass), or --out cannot be written"}}},
    {"fixit build",
     {{kExitOk, "the variant was built and exported"},
      {kExitUsage,
       "a broken spec (naming the field), an --out folder holding another spec's build, an unknown model"},
      {kExitIncomplete,
       "nothing was exported (no GPU here to verify a fix, no fix verified, none with an accepted "
       "reasoning): the files are written but hold no example, which is no data set"},
      {kExitConfig,
       "a broken task file or model catalogue, or a numeric $PTXBENCH_* setting that is not a whole number"},
      {kExitHarness,
       "a model or judge error stopped a step: the same command resumes it; or the store or --out cannot be "
       "written"}}},
    {"fixit show",
     {{kExitOk, "the run was shown"},
      {kExitUsage, "no such run, or not a fixit one"},
      {kExitHarness, "the results store cannot be opened (none yet)"}}},
    {"serve",
     {{kExitOk, "stopped by SIGINT or SIGTERM"},
      {kExitUsage,
       "no service token or a short one, a bad --listen or --redis address, an address it cannot bind"},
      {kExitConfig, "a broken task file"},
      {kExitHarness, "--port-file cannot be written"}}},
    {"worker",
     {{kExitOk, "stopped by SIGINT or SIGTERM, after the job at hand"},
      {kExitUsage,
       "not exactly one of --gpu N and --cpu-only, --lease under twice --heartbeat, a bad --redis address"},
      {kExitConfig, "a broken task file, or a numeric $PTXBENCH_* setting that is not a whole number"},
      {kExitHarness, "no usable GPU N (none there, or not a task architecture's)"}}},
};

namespace exit_codes_detail {

// `text` on lines of at most 110 columns, each begun on a new line: the first after `first` (the code), the
// others after `indent`.
inline void append_wrapped(std::string& out, const std::string& first, std::string_view text,
                           const std::string& indent) {
  constexpr size_t kWidth = 110;
  std::string line = first;
  bool begun = false;  // a word of `text` is on this line
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (begun && line.size() + 1 + word.size() > kWidth) {
      out += "\n" + line;
      line = indent;
      begun = false;
    }
    line += (begun ? " " : "") + std::string(word);
    begun = true;
    start = end + 1;
  }
  out += "\n" + line;
}

}  // namespace exit_codes_detail

// "Exit codes:" and a line per code the command returns: the meaning every subcommand shares first, then the
// command's own.
inline std::string exit_codes_footer(const CommandExitCodes& entry) {
  std::map<int, std::string> meanings;
  for (const ExitCodeMeaning& m : kEveryCommandExitCodes) meanings[m.code] = m.meaning;
  for (const ExitCodeMeaning& m : entry.own) {
    std::string& meaning = meanings[m.code];
    meaning += (meaning.empty() ? "" : "; ") + std::string(m.meaning);
  }
  std::string out = "Exit codes:";
  for (const auto& [code, meaning] : meanings)
    exit_codes_detail::append_wrapped(out, "  " + std::to_string(code) + "  ", meaning, "     ");
  if (!entry.note.empty()) exit_codes_detail::append_wrapped(out, "", entry.note, "");
  return out;
}

}  // namespace ptxbench
