// `allot server --host-map FILE`: the slots and the per-type limits read from the YAML file, and
// each mistake refused with a message naming the type and the field.

#include "cli/host_map.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "cli/commands.h"

namespace allot::cli {
namespace {

// The text in a file of its own, removed with the object.
class MapFile {
 public:
  explicit MapFile(const std::string& text) {
    char name[] = "/tmp/allot-host-map-XXXXXX";
    const int fd = ::mkstemp(name);
    EXPECT_GE(fd, 0);
    ::close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~MapFile() { std::remove(path_.c_str()); }
  MapFile(const MapFile&) = delete;
  MapFile& operator=(const MapFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The message ReadHostMapLimits (or ReadHostMap) throws for `text`, or "" when it reads it.
template <typename Read>
std::string Refusal(const std::string& text, Read read) {
  const MapFile file(text);
  try {
    read(file.path());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(HostMap, BothFormsGiveTheSlotsAndTheLimitsForm) {
  const MapFile file(R"(
ml.g5.xlarge:
  - {gpus: "0", cpus: "0-3"}
  - {gpus: "1", cpus: "4-7"}
ml.p4d.24xlarge:
  slots: [{gpus: "0,1,2,3", cpus: "0-23"}]
  limits: {memory: 512G, pids: 16384, tmp: 8MiB, disk: 2T, files: 5000}
ml.c5.xlarge:
  limits: {disk: 0}
)");
  const auto slots = ReadHostMap(file.path());
  ASSERT_EQ(slots.at("ml.g5.xlarge").size(), 2U);
  EXPECT_EQ(slots.at("ml.g5.xlarge")[1].gpus, "1");
  EXPECT_EQ(slots.at("ml.g5.xlarge")[1].cpus, "4-7");
  EXPECT_EQ(slots.at("ml.p4d.24xlarge").size(), 1U);
  EXPECT_EQ(slots.count("ml.c5.xlarge"), 0U);  // limits only: no slots

  const auto limits = ReadHostMapLimits(file.path());
  EXPECT_EQ(limits.count("ml.g5.xlarge"), 0U);  // the server's own limits
  const server::Options::LimitOverrides& p4d = limits.at("ml.p4d.24xlarge");
  EXPECT_EQ(p4d.memory_bytes, std::int64_t{512} << 30);
  EXPECT_EQ(p4d.pids, 16384);
  EXPECT_EQ(p4d.tmp_bytes, std::int64_t{8} << 20);
  EXPECT_EQ(p4d.disk_bytes, std::int64_t{2} << 40);
  EXPECT_EQ(p4d.files, 5000);
  const server::Options::LimitOverrides& c5 = limits.at("ml.c5.xlarge");
  EXPECT_EQ(c5.disk_bytes, 0);  // none for this type, whatever the server's
  EXPECT_FALSE(c5.memory_bytes.has_value());
  EXPECT_FALSE(c5.files.has_value());
}

TEST(HostMap, MistakesNameTheTypeAndTheField) {
  auto limits = [](const std::string& path) { ReadHostMapLimits(path); };
  auto slots = [](const std::string& path) { ReadHostMap(path); };
  EXPECT_EQ(Refusal("t:\n  limits: {disk: lots}\n", limits).rfind("t: limits.disk: ", 0), 0U);
  EXPECT_EQ(Refusal("t:\n  limits: {files: -1}\n", limits),
            "t: limits.files must be a whole number, 0 (none) or more");
  EXPECT_EQ(Refusal("t:\n  limits: {pids: -5}\n", limits),
            "t: limits.pids must be a whole number, 0 (none) or more");
  EXPECT_EQ(Refusal("t:\n  limits: {pids: many}\n", limits),
            "t: limits.pids must be a whole number, 0 (none) or more");
  EXPECT_EQ(Refusal("t:\n  limits: {gpus: 2}\n", limits),
            "t: unknown limit gpus (memory, pids, tmp, disk, files)");
  EXPECT_EQ(Refusal("t:\n  limits: [1]\n", limits), "t: limits must be a map");
  EXPECT_EQ(Refusal("t:\n  slot: []\n", slots), "t: unknown field slot (slots, limits)");
  EXPECT_EQ(Refusal("t:\n  - {gpus: \"0\", memory: 1G}\n", slots),
            "t: unknown slot field memory (gpus, cpus)");
  EXPECT_EQ(Refusal("[1, 2]\n", slots), "expected a map from instance type to slot lists");
}

}  // namespace
}  // namespace allot::cli
