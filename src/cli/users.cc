#include "cli/users.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli/format.h"

namespace allot::cli {

std::string UserPath(std::string_view name, std::string_view rest) {
  std::string path = "/allot/v1/users";
  if (!name.empty()) path += "/" + PercentEncode(name);
  return path + std::string(rest);
}

Json ReadPolicyFile(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CliError("policy file " + path + ": cannot be read");
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  const std::string name = path == "-" ? "standard input" : path;
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw CliError("policy file " + name + ": not JSON: " + e.what());
  }
  if (!doc.is_object()) {
    throw CliError("policy file " + name +
                   ": a policy document is a JSON object ({\"Version\": ..., \"Statement\": "
                   "[...]}), not " +
                   doc.type_name());
  }
  return doc;
}

api::Credentials AccessKeyFromAnswer(const Json& answer) {
  const Json key = answer.value("accessKey", Json::object());
  api::Credentials creds;
  if (key.is_object()) {
    creds.access_key_id = key.value("accessKeyId", "");
    creds.secret_access_key = key.value("secretAccessKey", "");
  }
  if (creds.access_key_id.empty() || creds.secret_access_key.empty()) {
    throw CliError("the server's answer carries no accessKey {accessKeyId, secretAccessKey}");
  }
  return creds;
}

void PrintUsersTable(const Json& users, std::ostream& out) {
  Table table({"NAME", "ARN", "ACCESS KEYS", "CREATED", "POLICY"});
  for (const Json& u : users) {
    std::string keys;
    for (const Json& k : u.value("accessKeyIds", Json::array())) {
      if (k.is_string()) keys += (keys.empty() ? "" : ",") + k.get<std::string>();
    }
    table.Add({u.value("userName", "-"), u.value("arn", "-"), keys.empty() ? "-" : keys,
               FormatTime(u.value("createdAt", Json())),
               u.value("hasPolicy", false) ? "yes" : "no"});
  }
  if (table.empty()) {
    out << "no users\n";
    return;
  }
  table.Print(out);
}

void PrintSavedKey(const SavedKey& key, std::ostream& out) {
  const std::string profile = ShellQuote(key.user_name);
  const std::string file_env =
      key.credentials_file == key.default_file
          ? ""
          : "AWS_SHARED_CREDENTIALS_FILE=" + ShellQuote(key.credentials_file) + " ";
  out << "wrote access key " << key.access_key_id << " of user " << key.user_name << " as profile ["
      << key.user_name << "] of " << key.credentials_file << " (mode 0600)\n"
      << "use it with:\n"
      << "  " << file_env << "allot jobs --profile " << profile << "\n"
      << "  " << file_env << "AWS_PROFILE=" << profile << " aws batch describe-job-queues"
      << " --endpoint-url " << ShellQuote(key.endpoint_url) << " --region "
      << ShellQuote(key.region) << "\n";
}

}  // namespace allot::cli
