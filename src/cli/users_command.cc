// `allot users create|list|delete|keys rotate|policy put|policy get`: the server's identities and
// their IAM-style policies, through the /allot/v1/users extension endpoints. A new or rotated key
// is written as profile [NAME] of a shared-credentials file, where `aws configure --profile NAME`
// would put it.

#include <iostream>

#include "cli/commands.h"
#include "cli/users.h"

namespace allot::cli {

namespace {

struct UsersArgs {
  std::string name;
  std::string policy_file;
  std::string credentials_file;  // empty: SharedCredentialsPath()
  bool json = false;
};

using UsersFn = int (*)(const UsersArgs&, Client&);

// Writes the key of a create or rotate answer as profile [name] and says how to use it. The
// server shows a secret only once, so when the file cannot be written the key is printed.
int SaveKey(const UsersArgs& a, const Client& client, const Json& answer) {
  const api::Credentials creds = AccessKeyFromAnswer(answer);
  const std::string path =
      a.credentials_file.empty() ? SharedCredentialsPath() : a.credentials_file;
  const Status s = api::WriteSharedCredentialsFile(path, creds, a.name);
  if (!s.ok()) {
    std::cerr << "allot: cannot write profile [" << a.name << "] to " << path << ": " << s.message()
              << "\nthe new key, shown only this once:\n";
    std::cout << "[" << a.name << "]\naws_access_key_id = " << creds.access_key_id
              << "\naws_secret_access_key = " << creds.secret_access_key << "\n";
    return 1;
  }
  PrintSavedKey({.user_name = a.name,
                 .access_key_id = creds.access_key_id,
                 .credentials_file = path,
                 .default_file = SharedCredentialsPath(),
                 .endpoint_url = client.config().endpoint.url,
                 .region = client.config().region},
                std::cout);
  return 0;
}

int RunCreate(const UsersArgs& a, Client& client) {
  Json body = {{"userName", a.name}};
  if (!a.policy_file.empty()) body["policy"] = ReadPolicyFile(a.policy_file);
  const Json answer = client.Send("POST", UserPath(""), "", body.dump());
  const Json user = answer.value("user", Json::object());
  std::cout << "created user " << user.value("userName", a.name) << " ("
            << user.value("arn", "no ARN") << "), "
            << (user.value("hasPolicy", false) ? "with" : "without") << " a policy\n";
  return SaveKey(a, client, answer);
}

int RunList(const UsersArgs& a, Client& client) {
  const Json users = client.Get(UserPath(""), "").value("users", Json::array());
  if (a.json) {
    std::cout << users.dump(2) << '\n';
  } else {
    PrintUsersTable(users, std::cout);
  }
  return 0;
}

int RunDelete(const UsersArgs& a, Client& client) {
  client.Send("DELETE", UserPath(a.name), "", "");
  std::cout << "deleted user " << a.name << " (its keys no longer work)\n";
  return 0;
}

int RunRotate(const UsersArgs& a, Client& client) {
  const Json answer = client.Send("POST", UserPath(a.name, "/keys/rotate"), "", "");
  std::cout << "rotated the access key of user " << a.name << " (the old key no longer works)\n";
  return SaveKey(a, client, answer);
}

int RunPolicyPut(const UsersArgs& a, Client& client) {
  const Json document = ReadPolicyFile(a.policy_file);
  client.Send("PUT", UserPath(a.name, "/policy"), "", document.dump());
  std::cout << "put the policy of user " << a.name << '\n';
  return 0;
}

int RunPolicyGet(const UsersArgs& a, Client& client) {
  std::cout << client.Get(UserPath(a.name, "/policy"), "").value("policy", Json()).dump(2) << '\n';
  return 0;
}

// A subcommand of `parent` that runs `fn` with `args` and a client from its --endpoint/--profile.
CLI::App* AddLeaf(CLI::App* parent, const char* name, const char* help, Runner* run, UsersFn fn,
                  const std::shared_ptr<UsersArgs>& args) {
  CLI::App* sub = parent->add_subcommand(name, help);
  auto endpoint = AddEndpointOption(sub);
  sub->callback([run, fn, args, endpoint] {
    *run = [fn, args, endpoint] {
      Client client(LoadClientConfig(*endpoint));
      return fn(*args, client);
    };
  });
  return sub;
}

void AddCredentialsFileOption(CLI::App* sub, UsersArgs& a) {
  sub->add_option("--credentials-file", a.credentials_file,
                  "shared-credentials file to write the key to, as profile [NAME] (default: "
                  "$AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials)");
}

void AddKeysAndPolicy(CLI::App* users, Runner* run) {
  CLI::App* keys = users->add_subcommand("keys", "manage a user's access keys");
  keys->require_subcommand(1);
  auto rotate = std::make_shared<UsersArgs>();
  CLI::App* sub = AddLeaf(keys, "rotate", "give a user a new access key; the old ones stop working",
                          run, RunRotate, rotate);
  sub->add_option("name", rotate->name, "user name")->required();
  AddCredentialsFileOption(sub, *rotate);

  CLI::App* policy = users->add_subcommand("policy", "set or show a user's IAM policy");
  policy->require_subcommand(1);
  auto put = std::make_shared<UsersArgs>();
  sub = AddLeaf(policy, "put", "replace a user's policy with the document in a file", run,
                RunPolicyPut, put);
  sub->add_option("name", put->name, "user name")->required();
  sub->add_option("file", put->policy_file, "IAM policy document (JSON; - for standard input)")
      ->required();
  auto get = std::make_shared<UsersArgs>();
  sub = AddLeaf(policy, "get", "print a user's policy document (null when it has none)", run,
                RunPolicyGet, get);
  sub->add_option("name", get->name, "user name")->required();
}

}  // namespace

void AddUsersCommand(CLI::App& app, Runner* run) {
  CLI::App* users =
      app.add_subcommand("users", "manage the server's users, their access keys and policies");
  users->require_subcommand(1);

  auto create = std::make_shared<UsersArgs>();
  CLI::App* sub = AddLeaf(users, "create",
                          "create a user and write its access key as profile [NAME] of a "
                          "shared-credentials file",
                          run, RunCreate, create);
  sub->add_option("name", create->name, "user name")->required();
  sub->add_option("--policy", create->policy_file,
                  "IAM policy document (JSON file; - for standard input)");
  AddCredentialsFileOption(sub, *create);

  auto list = std::make_shared<UsersArgs>();
  sub = AddLeaf(users, "list", "list the users", run, RunList, list);
  sub->add_flag("--json", list->json, "print the users as JSON");

  auto del = std::make_shared<UsersArgs>();
  sub = AddLeaf(users, "delete", "delete a user and its access keys", run, RunDelete, del);
  sub->add_option("name", del->name, "user name")->required();

  AddKeysAndPolicy(users, run);
}

}  // namespace allot::cli
