// kiln/epcontext.h: planMerge — the merged model's names and every reason a merge would refuse, from the inputs as
// inspectEpContextModel read them. mergeEpContextModels, `kiln merge` and the studio's merge wizard all ask this.
#include <algorithm>
#include <map>
#include <set>

#include "ir/graph_paths.h"
#include "kiln/epcontext.h"

namespace kiln {
namespace {

std::string inputLabel(int index) { return "input " + std::to_string(index + 1); }

// Who defines each name of one kind (value, node, graph); a name a second input defines is a conflict.
class Owners {
 public:
  Owners(const char* what, MergePlan& plan) : what_(what), plan_(plan) {}

  void claim(const std::string& name, int input) {
    if (name.empty()) return;
    auto [it, inserted] = owners_.emplace(name, input);
    if (inserted || it->second == input) return;  // one input never conflicts with itself
    plan_.conflicts.push_back(std::string(what_) + " '" + name + "' (" + inputLabel(input) + " and " +
                              inputLabel(it->second) + ")");
    if (std::find(plan_.conflictingNames.begin(), plan_.conflictingNames.end(), name) == plan_.conflictingNames.end()) {
      plan_.conflictingNames.push_back(name);
    }
  }

 private:
  const char* what_;
  MergePlan& plan_;
  std::map<std::string, int> owners_;
};

// The graph an EPContext node runs: its partition_name, or the one graph its binary holds.
std::string graphOf(const EpContextNodeInfo& node, const EpContextModelInfo& model) {
  if (!node.partitionName.empty()) return node.partitionName;
  auto binary = model.binaries.find(node.binary);
  if (binary != model.binaries.end() && binary->second.graphs.size() == 1) return binary->second.graphs.front().name;
  return node.name;
}

std::string connectionProblem(const MergePlan& plan, const MergePlanConnection& c, const std::set<std::string>& fed) {
  auto from = std::find_if(plan.outputs.begin(), plan.outputs.end(), [&](const auto& v) { return v.value.name == c.from; });
  auto to = std::find_if(plan.inputs.begin(), plan.inputs.end(), [&](const auto& v) { return v.value.name == c.to; });
  if (from == plan.outputs.end()) return "'" + c.from + "' is not an output of any input model";
  if (to == plan.inputs.end()) return "'" + c.to + "' is not a graph input of any input model";
  if (from->input == to->input) return "both belong to the same input model";
  if (fed.count(c.to)) return "'" + c.to + "' is already fed by another connection";
  const DataType produced = from->value.dtype, expected = to->value.dtype;
  if (produced != DataType::UNDEFINED && expected != DataType::UNDEFINED && produced != expected) {
    return std::string(dataTypeName(produced)) + " output into a " + dataTypeName(expected) + " input";
  }
  return {};
}

}  // namespace

bool MergePlan::ok() const {
  return problems.empty() && conflicts.empty() &&
         std::all_of(connections.begin(), connections.end(), [](const auto& c) { return c.problem.empty(); });
}

Status MergePlan::status() const {
  if (ok()) return Status::ok();
  std::string message;
  auto line = [&](const std::string& text) { message += (message.empty() ? "" : "\n") + text; };
  for (const auto& problem : problems) line(problem);
  if (!conflicts.empty()) {
    std::string list;
    for (const auto& c : conflicts) list += "\n  " + c;
    line(std::to_string(conflicts.size()) + " name conflict(s) after prefixing (give each input its own prefix):" +
         list);
  }
  for (const auto& c : connections) {
    if (!c.problem.empty()) line("connection " + c.from + " -> " + c.to + ": " + c.problem);
  }
  return Status(StatusCode::INVALID_ARGUMENT, message);
}

MergePlan planMergeOfInspected(const std::vector<MergePlanInput>& inputs,
                    const std::vector<std::pair<std::string, std::string>>& connections) {
  MergePlan plan;
  if (inputs.size() < 2) plan.problems.push_back("merging needs at least two ctx models");
  Owners values("value", plan), nodes("node", plan), graphs("graph", plan);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int input = static_cast<int>(i);
    const EpContextModelInfo& model = *inputs[i].model;
    const std::string& prefix = inputs[i].prefix;
    auto rename = [&](const std::string& name) { return name.empty() ? name : prefix + name; };
    auto renameAll = [&](std::vector<std::string> names) {
      for (auto& name : names) name = rename(name);
      return names;
    };
    for (ValueMetadata value : model.inputs) {
      value.name = rename(value.name);
      values.claim(value.name, input);
      plan.inputs.push_back({std::move(value), input});
    }
    for (ValueMetadata value : model.outputs) {
      value.name = rename(value.name);
      plan.outputs.push_back({std::move(value), input});
    }
    for (const auto& name : model.initializers) {
      values.claim(rename(name), input);
      plan.initializers.push_back({rename(name), input});
    }
    for (const MainGraphNode& node : model.mainGraphNodes) {
      MergePlanNode planned;
      planned.name = rename(node.name);
      planned.opType = node.opType;
      planned.epContext = isEpContextNode(node.opType, node.domain);
      planned.inputs = renameAll(node.inputs);
      planned.outputs = renameAll(node.outputs);
      planned.input = input;
      if (planned.epContext) {
        for (const auto& info : model.nodes) {
          if (info.graph == ir::kMainGraphPath && info.name == node.name) planned.partition = rename(graphOf(info, model));
        }
      }
      nodes.claim(planned.name, input);
      for (const auto& out : planned.outputs) values.claim(out, input);
      plan.nodes.push_back(std::move(planned));
    }
    for (const auto& info : model.nodes) {
      const std::string graph = rename(graphOf(info, model));
      graphs.claim(graph, input);
      plan.graphs.push_back({graph, input});
    }
  }
  std::sort(plan.conflicts.begin(), plan.conflicts.end());

  std::set<std::string> fed;
  for (const auto& [from, to] : connections) {
    MergePlanConnection connection{from, to, {}};
    connection.problem = connectionProblem(plan, connection, fed);
    if (connection.problem.empty()) fed.insert(to);
    plan.connections.push_back(std::move(connection));
  }
  std::erase_if(plan.inputs, [&](const MergePlanValue& v) { return fed.count(v.value.name) > 0; });
  return plan;
}

Result<MergePlan> planMerge(const std::vector<MergeInput>& inputs,
                            const std::vector<std::pair<std::string, std::string>>& connections) {
  std::vector<MergePlanInput> read;
  for (const auto& input : inputs) {
    auto model = inspectEpContextModel(input.ctxModelPath);
    if (!model.isOk()) return model.status().withContext("reading merge input " + input.ctxModelPath);
    read.push_back({std::make_shared<const EpContextModelInfo>(std::move(model).value()), input.prefix});
  }
  return planMergeOfInspected(read, connections);
}

}  // namespace kiln
