#include "exec/slurm_client.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "common/strings.h"
#include "exec/command.h"
#include "exec/spawn.h"

namespace allot::exec {

namespace {

using Json = nlohmann::json;

// id | state | reason | nodes | comment | working directory (squeue --format).
constexpr char kSqueueFormat[] = "%i|%T|%r|%N|%k|%Z";

// Slurm's JSON differs between releases: 22.05 writes a state as a string, later ones as a list
// of flags; numbers may be plain or {"set":true,"number":N}. These read either.
std::string Text(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<std::int64_t>());
  if (it->is_array()) {
    std::string joined;
    for (const Json& part : *it) {
      if (!part.is_string()) continue;
      if (!joined.empty()) joined += '+';
      joined += part.get<std::string>();
    }
    return joined;
  }
  if (it->is_object()) {
    if (it->contains("number")) return std::to_string(it->value("number", std::int64_t{0}));
    if (it->contains("configured")) return Text(*it, "configured");
  }
  return "";
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Slurm's --json commands exit 0 even when slurmctld did not answer: they say so in "errors"
// beside an empty list, which must not be read as "no jobs".
Result<Json> ParseDocument(const std::string& text, const char* what) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgument(std::string(what) +
                           " did not print a JSON object: " + text.substr(0, 200));
  }
  const auto errors = doc.find("errors");
  if (errors != doc.end() && errors->is_array() && !errors->empty()) {
    std::string said;
    for (const Json& e : *errors) {
      if (!said.empty()) said += "; ";
      said += e.is_object() ? Text(e, "description") +
                                  (Text(e, "description").empty() ? "" : ": ") + Text(e, "error")
                            : e.dump();
    }
    return Status(StatusCode::kUnavailable, std::string(what) + " reported: " + said);
  }
  return doc;
}

const std::set<std::string>& UnusableNodeStates() {
  static const std::set<std::string> kStates = {
      "DOWN",       "DRAIN",       "DRAINED",    "DRAINING",       "FAIL",
      "FAILING",    "FUTURE",      "UNKNOWN",    "NOT_RESPONDING", "POWERED_DOWN",
      "POWER_DOWN", "INVALID_REG", "MAINTENANCE"};
  return kStates;
}

bool NodeUsable(const std::string& state_text, const Json& node) {
  // The upper-cased text must outlive the views Split returns.
  const std::string upper = Upper(state_text);
  std::vector<std::string> words;
  for (std::string_view w : Split(upper, '+')) words.emplace_back(w);
  for (const Json& flag : node.value("state_flags", Json::array())) {
    if (flag.is_string()) words.push_back(Upper(flag.get<std::string>()));
  }
  if (words.empty()) return false;
  return std::none_of(words.begin(), words.end(), [](const std::string& w) {
    return UnusableNodeStates().count(w) != 0 || w.empty();
  });
}

class SlurmCli final : public SlurmClient {
 public:
  explicit SlurmCli(SlurmCliOptions options) : options_(std::move(options)) {}

  Result<std::string> Submit(const SlurmJobRequest& r) override {
    std::vector<std::string> argv = {Program("sbatch"),
                                     "--parsable",
                                     "--nodes=" + std::to_string(r.nodes),
                                     "--ntasks-per-node=1",
                                     "-J",
                                     r.name,
                                     "--comment=" + r.comment,
                                     "--partition=" + r.partition};
    if (!r.account.empty()) argv.push_back("--account=" + r.account);
    if (!r.constraint.empty()) argv.push_back("--constraint=" + r.constraint);
    if (!r.gres.empty()) argv.push_back("--gres=" + r.gres);
    if (r.cpus_per_node > 0) argv.push_back("--cpus-per-task=" + std::to_string(r.cpus_per_node));
    if (r.memory_mb_per_node > 0) argv.push_back("--mem=" + std::to_string(r.memory_mb_per_node));
    if (!r.work_dir.empty()) argv.push_back("--chdir=" + r.work_dir);
    if (!r.output.empty()) argv.insert(argv.end(), {"--output=" + r.output, "--error=" + r.output});
    // Slurm must not requeue or preempt on its own: Allot decides, and a requeued job would run
    // an attempt twice.
    argv.insert(argv.end(), {"--no-requeue", "--export=ALL", r.script_path});
    Result<CommandOutput> out = Run(argv, JobEnvironment());
    if (!out.ok()) return out.status();
    const std::string line(Trim(out->out.substr(0, out->out.find('\n'))));
    const std::string id = line.substr(0, line.find(';'));
    if (id.empty() || !std::all_of(id.begin(), id.end(), ::isdigit)) {
      return Internal("sbatch printed no job id: '" + std::string(Trim(out->out)) + "'");
    }
    return id;
  }

  Status Signal(const std::string& id, const std::string& signal, bool full) override {
    std::vector<std::string> argv = {Program("scancel"), "--signal=" + signal};
    if (full) argv.emplace_back("--full");
    argv.push_back(id);
    return Run(argv).status();
  }

  Status Cancel(const std::string& id) override { return Run({Program("scancel"), id}).status(); }

  Result<std::vector<SlurmJob>> Jobs() override {
    // Text, not --json: squeue --json of 22.05 writes every field of every job slurmctld holds
    // (about 3.7 KB a job; 0.17 s for 320 jobs, against 0.013 s for these six fields).
    Result<CommandOutput> out = Run({Program("squeue"), "--noheader", "--all", "--states=all",
                                     std::string("--format=") + kSqueueFormat});
    if (!out.ok()) return out.status();
    return ParseSqueueText(out->out);
  }

  Result<SlurmJob> Accounting(const std::string& id) override {
    Result<CommandOutput> out = Run({Program("sacct"), "--noheader", "--parsable2", "--allocations",
                                     "--jobs=" + id, "--format=JobID,State,NodeList"});
    if (!out.ok()) {
      if (out.status().message().find("accounting storage is disabled") != std::string::npos) {
        return FailedPrecondition("the cluster keeps no accounting");
      }
      return out.status();
    }
    return ParseSacctLine(out->out, id);
  }

  Status CheckProgram(const std::string& program) override {
    Result<CommandOutput> out = Run({Program(program), "--version"});
    if (out.ok()) return Status::Ok();
    return FailedPrecondition("Slurm's " + program +
                              " does not work here (install slurm-client, "
                              "or put it on PATH): " +
                              out.status().message());
  }

  Result<std::vector<SlurmNode>> Nodes() override {
    Result<CommandOutput> out = Run({Program("sinfo"), "--json"});
    if (!out.ok()) return out.status();
    return ParseNodesJson(out->out);
  }

 private:
  std::string Program(const std::string& name) const {
    return options_.bin_dir.empty() ? name : options_.bin_dir + "/" + name;
  }

  // sbatch's environment, which --export=ALL gives the batch job as it is: our PATH (the batch
  // step finds srun as we found sbatch) and LD_LIBRARY_PATH (a Slurm installed under its own
  // prefix may need it, for sbatch and srun alike), and Slurm's own variables (SLURM_*,
  // SBATCH_*), nothing else of the server's. Not --export=NONE: with NONE (or a list of names)
  // sbatch has slurmd build every job's environment from a login shell of the job's user on the
  // node (`su - USER -c 'slurmstepd getenv'`, Slurm's --get-user-env), one more shell per job whose
  // time and output depend on that user's profile. A profile that took seconds (pyenv's) made
  // slurmd fail most jobs NODE_FAIL at 3 submissions/s (docs/benchmarks.md, "Allot on Slurm").
  static std::map<std::string, std::string> JobEnvironment() {
    std::map<std::string, std::string> environment;
    for (auto& [name, value] : CurrentEnvironment()) {
      if (name == "PATH" || name == "LD_LIBRARY_PATH" || name.starts_with("SLURM_") ||
          name.starts_with("SBATCH_")) {
        environment.emplace(name, std::move(value));
      }
    }
    environment.emplace("PATH", "/usr/local/bin:/usr/bin:/bin");  // when we have none
    return environment;
  }

  // A nonzero exit is an error too: its message is the command and what it said on stderr.
  // With `only` set, the command's environment is that alone (and SLURM_CONF), not ours.
  Result<CommandOutput> Run(
      const std::vector<std::string>& argv,
      std::optional<std::map<std::string, std::string>> only = std::nullopt) const {
    CommandRequest request;
    request.argv = argv;
    request.timeout = options_.timeout;
    if (only.has_value()) {
      request.environment = std::move(*only);
      request.inherit_environment = false;
    }
    if (!options_.slurm_conf.empty()) request.environment["SLURM_CONF"] = options_.slurm_conf;
    Result<CommandOutput> out = RunCommand(request);
    if (!out.ok()) return out.status();
    if (out->exit_code != 0) {
      std::string said(Trim(out->err.empty() ? out->out : out->err));
      if (said.size() > 500) said = said.substr(0, 500) + "...";
      return Status(StatusCode::kUnavailable, "'" + CommandLine(argv) + "' failed (exit " +
                                                  std::to_string(out->exit_code) + "): " + said);
    }
    return out;
  }

  const SlurmCliOptions options_;
};

}  // namespace

bool SlurmStateEnded(const std::string& state) {
  static const std::set<std::string> kEnded = {
      "COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT",       "NODE_FAIL",
      "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY", "SPECIAL_EXIT"};
  return kEnded.count(std::string(Split(state, '+').front())) != 0;
}

bool SlurmStatePending(const std::string& state) {
  const std::string base(Split(state, '+').front());
  return base == "PENDING" || base == "REQUEUED" || base == "REQUEUE_HOLD" ||
         base == "REQUEUE_FED" || base == "CONFIGURING" || base == "SUSPENDED";
}

Result<std::vector<SlurmJob>> ParseSqueueText(const std::string& text) {
  std::vector<SlurmJob> jobs;
  for (std::string_view line : Split(text, '\n')) {
    if (Trim(line).empty()) continue;
    // The last field (the working directory) keeps any '|' of its own.
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (int i = 0; i < 5; ++i) {
      const std::size_t bar = line.find('|', start);
      if (bar == std::string_view::npos) {
        return InvalidArgument("squeue printed a line without 6 fields: '" + std::string(line) +
                               "'");
      }
      fields.emplace_back(line.substr(start, bar - start));
      start = bar + 1;
    }
    fields.emplace_back(line.substr(start));
    SlurmJob job;
    job.id = fields[0];
    job.state = Upper(fields[1]);
    job.reason = fields[2];
    job.nodes = fields[3];
    job.comment = fields[4] == "(null)" ? "" : fields[4];
    job.work_dir = fields[5];
    if (job.id.empty() || !std::all_of(job.id.begin(), job.id.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '+';
        })) {
      return InvalidArgument("squeue printed a bad job id in '" + std::string(line) + "'");
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Result<SlurmJob> ParseSacctLine(const std::string& text, const std::string& id) {
  for (std::string_view line : Split(text, '\n')) {
    const std::vector<std::string_view> fields = Split(Trim(line), '|');
    if (fields.size() != 3 || fields[0] != id) continue;
    SlurmJob job;
    job.id = id;
    // "CANCELLED by 0": the state is the first word.
    job.state = Upper(std::string(Split(fields[1], ' ').front()));
    job.nodes = std::string(fields[2]);
    return job;
  }
  return NotFound("Slurm's accounting does not know job " + id);
}

Result<std::vector<SlurmNode>> ParseNodesJson(const std::string& text) {
  Result<Json> doc = ParseDocument(text, "sinfo --json");
  if (!doc.ok()) return doc.status();
  const auto nodes = doc->find("nodes");
  if (nodes == doc->end() || !nodes->is_array()) return InvalidArgument("no nodes in the answer");
  std::vector<SlurmNode> out;
  for (const Json& n : *nodes) {
    if (!n.is_object()) continue;
    SlurmNode node;
    node.name = Text(n, "name");
    node.address = Text(n, "address");
    node.state = Upper(Text(n, "state"));
    node.usable = NodeUsable(node.state, n);
    node.cpus = static_cast<int>(std::strtol(Text(n, "cpus").c_str(), nullptr, 10));
    node.memory_mb = std::strtoll(Text(n, "real_memory").c_str(), nullptr, 10);
    for (const Json& p : n.value("partitions", Json::array())) {
      if (p.is_string()) node.partitions.push_back(p.get<std::string>());
    }
    if (!node.name.empty()) out.push_back(std::move(node));
  }
  return out;
}

std::unique_ptr<SlurmClient> NewSlurmCli(const SlurmCliOptions& options) {
  return std::make_unique<SlurmCli>(options);
}

}  // namespace allot::exec
