// Machine facts, environment and command line of a benchmark result (bench_environment.h).
#include "bench_environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "kiln/version.h"

extern char** environ;

namespace kiln::app {
namespace {

// The value of the first "key\t: value" line of /proc/cpuinfo, or "".
std::string cpuinfoField(const std::string& key) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

nlohmann::json orNull(const std::string& text) { return text.empty() ? nlohmann::json() : nlohmann::json(text); }

}  // namespace

nlohmann::json machineFacts() {
  nlohmann::json facts;
  facts["cpu_model"] = orNull(cpuinfoField("model name"));
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  facts["logical_cores"] = cores > 0 ? nlohmann::json(cores) : nlohmann::json();
  std::set<std::string> flags;
  std::istringstream words(cpuinfoField("flags"));
  for (std::string flag; words >> flag;) flags.insert(flag);
  nlohmann::json isa = nlohmann::json::object();
  for (const char* flag : kReportedIsaFlags) isa[flag] = flags.count(flag) > 0;
  facts["isa"] = flags.empty() ? nlohmann::json() : isa;
  facts["ram_bytes"] = nullptr;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemTotal:", 0) == 0) {
      facts["ram_bytes"] = std::stoll(line.substr(9)) * 1024;  // "MemTotal:  16384 kB"
      break;
    }
  }
  utsname name{};
  if (uname(&name) == 0) {
    facts["os"] = {{"sysname", name.sysname}, {"release", name.release}, {"version", name.version},
                   {"machine", name.machine}};
  } else {
    facts["os"] = nullptr;
  }
  return facts;
}

nlohmann::json resultEnvironment() {
  nlohmann::json variables = nlohmann::json::object();  // nlohmann's object keeps its keys sorted
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string text = *entry;
    const size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = text.substr(0, equals);
    for (const char* prefix : kReportedEnvironmentPrefixes) {
      if (name.rfind(prefix, 0) == 0) {
        variables[name] = text.substr(equals + 1);
        break;
      }
    }
  }
  return variables;
}

std::vector<std::string> processCommandLine() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string word; std::getline(file, word, '\0');) argv.push_back(word);
  return argv;
}

nlohmann::json kilnBuildFacts() { return {{"version", engineVersion()}, {"git_revision", nullptr}}; }

}  // namespace kiln::app
