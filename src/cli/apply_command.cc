// `allot apply -f FILE [--dry-run]`.

#include <iostream>

#include "cli/apply.h"
#include "cli/commands.h"

namespace allot::cli {

std::shared_ptr<std::string> AddEndpointOption(CLI::App* sub) {
  auto endpoint = std::make_shared<std::string>();
  sub->add_option(
      "--endpoint", *endpoint,
      "server URL (default: $AWS_ENDPOINT_URL_BATCH, else " + std::string(kDefaultEndpoint) + ")");
  sub->add_option_function<std::string>(
      "--profile", SetProfileFlag,
      "profile of the shared-credentials file to sign with (default: $AWS_PROFILE, else "
      "default); it wins over AWS_ACCESS_KEY_ID, as in the AWS CLI");
  return endpoint;
}

void AddApplyCommand(CLI::App& app, Runner* run) {
  struct Opts {
    std::string file;
    bool dry_run = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* sub = app.add_subcommand(
      "apply",
      "create or update service environments, scheduling policies, job queues and "
      "quota shares from a YAML file");
  auto endpoint = AddEndpointOption(sub);
  sub->add_option("-f,--file", o->file, "YAML file (see examples/cluster.yaml)")->required();
  sub->add_flag("--dry-run", o->dry_run, "say what would change, change nothing");
  sub->callback([o, endpoint, run] {
    *run = [o, endpoint] {
      const ClusterSpec spec = LoadClusterSpec(o->file);
      Client client(LoadClientConfig(*endpoint));
      const ApplyCounts c = ApplySpec(client, spec, std::cout, o->dry_run);
      std::cout << (o->dry_run ? "dry run: " : "applied: ") << c.created
                << (o->dry_run ? " to create, " : " created, ") << c.updated
                << (o->dry_run ? " to update, " : " updated, ") << c.unchanged << " unchanged\n";
      return 0;
    };
  });
}

}  // namespace allot::cli
