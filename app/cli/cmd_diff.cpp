// kiln diff A.onnx B.onnx: what differs between two models (kiln/model_diff.h), one line per change, or as JSON.
// Exit codes as diff(1)'s, so scripts can test "unchanged": 0 identical, 1 different, 2 trouble (a model that cannot
// be read, a usage error).
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "cli_output.h"
#include "commands.h"
#include "kiln/model_diff.h"

namespace kiln::cli {
namespace {

constexpr int kExitDifferent = 1;
constexpr int kExitTrouble = 2;

struct DiffArgs {
  std::string a, b;
  CommonFlags flags;
};

std::string joined(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text + "]";
}

std::string hexHash(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// "conv1 (Conv)", with the body it sits in when that is not the main graph.
std::string nodeLabel(const NodeDiff& d) {
  const NodeSide& side = d.a.opType.empty() ? d.b : d.a;
  std::string text = d.name + " (" + (side.domain.empty() ? "" : side.domain + ":") + side.opType +
                     (d.unnamed ? ", unnamed" : "") + ")";
  return d.graph == "main" ? text : text + " in " + d.graph;
}

std::string inGraph(const std::string& graph) { return graph == "main" ? "" : " in " + graph; }

std::string nodeChanges(const NodeDiff& d) {
  std::vector<std::string> parts;
  if (d.opTypeChanged) {
    parts.push_back("op " + (d.a.domain.empty() ? "" : d.a.domain + ":") + d.a.opType + " -> " +
                    (d.b.domain.empty() ? "" : d.b.domain + ":") + d.b.opType);
  }
  if (d.inputsChanged) parts.push_back("inputs " + joined(d.a.inputs) + " -> " + joined(d.b.inputs));
  if (d.outputsChanged) parts.push_back("outputs " + joined(d.a.outputs) + " -> " + joined(d.b.outputs));
  for (const auto& attr : d.attributes) {
    parts.push_back(attr.name + " " + (attr.valueA.empty() ? "(absent)" : attr.valueA) + " -> " +
                    (attr.valueB.empty() ? "(absent)" : attr.valueB));
  }
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

std::string initializerChanges(const InitializerDiff& d) {
  if (d.typeChanged) return d.typeA + " -> " + d.typeB;
  std::string text = d.typeA + " content differs";
  if (d.differingElements >= 0) {
    text += " (" + std::to_string(d.differingElements) + " of " + std::to_string(d.elements) + " elements)";
  }
  return text + ", xxh3 " + hexHash(d.hashA) + " -> xxh3 " + hexHash(d.hashB);
}

void printValues(const char* heading, const std::vector<ValueDiff>& values) {
  if (values.empty()) return;
  std::printf("%s:\n", heading);
  for (const auto& v : values) {
    std::printf("  %-7s %s%s: %s\n", diffChangeName(v.change), v.name.c_str(), inGraph(v.graph).c_str(),
                v.change == DiffChange::CHANGED ? (v.typeA + " -> " + v.typeB).c_str()
                                                : (v.typeA.empty() ? v.typeB : v.typeA).c_str());
  }
}

void printNodes(const std::vector<NodeDiff>& nodes) {
  if (nodes.empty()) return;
  std::printf("nodes:\n");
  for (const auto& d : nodes) {
    const std::string detail = d.change == DiffChange::CHANGED ? ": " + nodeChanges(d) : "";
    std::printf("  %-7s %s%s\n", diffChangeName(d.change), nodeLabel(d).c_str(), detail.c_str());
  }
}

void printInitializers(const std::vector<InitializerDiff>& initializers) {
  if (initializers.empty()) return;
  std::printf("initializers:\n");
  for (const auto& d : initializers) {
    const std::string detail = d.change == DiffChange::CHANGED ? initializerChanges(d)
                               : d.change == DiffChange::ADDED ? d.typeB : d.typeA;
    std::printf("  %-7s %s%s: %s\n", diffChangeName(d.change), d.name.c_str(), inGraph(d.graph).c_str(),
                detail.c_str());
  }
}

// "2 changes: 1 node changed, 1 initializer changed"; "no differences" for identical models.
std::string summary(const ModelDiff& diff) {
  if (diff.identical()) return "no differences";
  std::vector<std::pair<std::string, int>> counts;  // "node changed" -> 1, in the order printed
  auto count = [&](const char* kind, DiffChange change) {
    const std::string key = std::string(kind) + " " + diffChangeName(change);
    for (auto& [k, n] : counts) {
      if (k == key) return void(++n);
    }
    counts.emplace_back(key, 1);
  };
  for (const auto& d : diff.opsets) count("opset", d.change);
  for (const auto& d : diff.inputs) count("input", d.change);
  for (const auto& d : diff.outputs) count("output", d.change);
  for (const auto& d : diff.nodes) count("node", d.change);
  for (const auto& d : diff.initializers) count("initializer", d.change);
  const size_t total = diff.changeCount();
  std::string text = std::to_string(total) + (total == 1 ? " change: " : " changes: ");
  for (size_t i = 0; i < counts.size(); ++i) {
    const auto& [key, n] = counts[i];
    const size_t space = key.find(' ');
    text += (i ? ", " : "") + std::to_string(n) + " " + key.substr(0, space) + (n == 1 ? "" : "s") + key.substr(space);
  }
  return text;
}

void printText(const ModelDiff& diff) {
  if (!diff.opsets.empty()) std::printf("opsets:\n");
  for (const auto& d : diff.opsets) {
    std::printf("  %-7s %s: %lld -> %lld\n", diffChangeName(d.change), d.domain.empty() ? "ai.onnx" : d.domain.c_str(),
                static_cast<long long>(d.versionA), static_cast<long long>(d.versionB));
  }
  printValues("inputs", diff.inputs);
  printValues("outputs", diff.outputs);
  printNodes(diff.nodes);
  printInitializers(diff.initializers);
  for (const auto& note : diff.notes) std::printf("note: %s\n", note.c_str());
  std::printf("%s\n", summary(diff).c_str());
}

nlohmann::json orNull(const std::string& text) { return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text); }

nlohmann::json toJson(const NodeSide& side) {
  if (side.opType.empty()) return nullptr;
  return {{"op_type", side.opType}, {"domain", side.domain}, {"inputs", side.inputs}, {"outputs", side.outputs}};
}

nlohmann::json toJson(const NodeDiff& d) {
  nlohmann::json attributes = nlohmann::json::array();
  for (const auto& attr : d.attributes) {
    attributes.push_back({{"name", attr.name}, {"a", orNull(attr.valueA)}, {"b", orNull(attr.valueB)}});
  }
  return {{"graph", d.graph}, {"name", d.name}, {"change", diffChangeName(d.change)}, {"unnamed", d.unnamed},
          {"matched_by_position", d.matchedByPosition}, {"a", toJson(d.a)}, {"b", toJson(d.b)},
          {"op_type_changed", d.opTypeChanged}, {"inputs_changed", d.inputsChanged},
          {"outputs_changed", d.outputsChanged}, {"attributes", attributes}};
}

nlohmann::json toJson(const InitializerDiff& d) {
  return {{"graph", d.graph}, {"name", d.name}, {"change", diffChangeName(d.change)},
          {"type_a", orNull(d.typeA)}, {"type_b", orNull(d.typeB)},
          {"hash_a", d.typeA.empty() ? nlohmann::json(nullptr) : nlohmann::json(hexHash(d.hashA))},
          {"hash_b", d.typeB.empty() ? nlohmann::json(nullptr) : nlohmann::json(hexHash(d.hashB))},
          {"type_changed", d.typeChanged}, {"content_changed", d.contentChanged},
          {"differing_elements",
           d.differingElements >= 0 ? nlohmann::json(d.differingElements) : nlohmann::json(nullptr)},
          {"elements", d.elements}};
}

nlohmann::json toJson(const std::vector<ValueDiff>& values) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& v : values) {
    list.push_back({{"graph", v.graph}, {"name", v.name}, {"change", diffChangeName(v.change)},
                    {"type_a", orNull(v.typeA)}, {"type_b", orNull(v.typeB)}});
  }
  return list;
}

nlohmann::json toJson(const ModelDiff& diff) {
  nlohmann::json opsets = nlohmann::json::array(), nodes = nlohmann::json::array();
  nlohmann::json initializers = nlohmann::json::array();
  for (const auto& d : diff.opsets) {
    opsets.push_back({{"domain", d.domain}, {"change", diffChangeName(d.change)}, {"version_a", d.versionA},
                      {"version_b", d.versionB}});
  }
  for (const auto& d : diff.nodes) nodes.push_back(toJson(d));
  for (const auto& d : diff.initializers) initializers.push_back(toJson(d));
  return {{"kind", "model_diff"}, {"a", diff.pathA}, {"b", diff.pathB}, {"identical", diff.identical()},
          {"change_count", diff.changeCount()}, {"summary", summary(diff)}, {"opsets", opsets},
          {"inputs", toJson(diff.inputs)}, {"outputs", toJson(diff.outputs)}, {"nodes", nodes},
          {"initializers", initializers}, {"notes", diff.notes}};
}

int runDiff(const DiffArgs& args) {
  configureLogging(args.flags);
  auto diff = diffModels(args.a, args.b);
  if (!diff.isOk()) {
    (void)reportError(diff.status(), args.flags);
    return kExitTrouble;  // as diff(1): 1 means "the models differ", so any failure is 2
  }
  if (args.flags.json) {
    printJson(toJson(*diff));
  } else if (!args.flags.quiet) {
    printText(*diff);
  }
  return diff->identical() ? kExitOk : kExitDifferent;
}

}  // namespace

void registerDiff(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Show what differs between two models: nodes and attributes, initializers, inputs and outputs, "
              "opsets, bodies (exit 1 when they differ)");
  cmd->add_option("a", args->a, "The first model (.onnx)")->required();
  cmd->add_option("b", args->b, "The second model (.onnx)")->required();
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nNodes are matched by name; unnamed nodes by position among those of their op type (a note says so).\n"
              "Models are compared as written: no shape inference, local functions not inlined; producer, metadata\n"
              "and ir_version are not compared.\n"
              "Exit (as diff(1)): 0 identical, 1 different, 2 a model cannot be read or a usage error.\n"
              "Examples:\n  kiln diff det.onnx det_v2.onnx\n  kiln diff det.onnx det_optimized.onnx --json");
  cmd->callback([args, &commands] { commands.run = [args] { return runDiff(*args); }; });
}

}  // namespace kiln::cli
