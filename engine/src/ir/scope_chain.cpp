#include "ir/scope_chain.h"

namespace kiln::ir {

ScopeChain::ScopeChain(const Graph& graph, const std::vector<const Graph*>& enclosing) {
  graphs_.push_back(&graph);
  graphs_.insert(graphs_.end(), enclosing.begin(), enclosing.end());
  for (const Graph* g : graphs_) {
    std::set<std::string> defined;
    for (const auto& in : g->inputs) defined.insert(in.name);
    for (const auto& node : g->nodes) defined.insert(node.outputs.begin(), node.outputs.end());
    defined_.push_back(std::move(defined));
  }
}

const Graph* ScopeChain::initializerOwner(const std::string& name) const {
  for (size_t k = 0; k < graphs_.size(); ++k) {
    if (graphs_[k]->initializers.count(name)) return graphs_[k];
    if (defined_[k].count(name)) return nullptr;
  }
  return nullptr;
}

DataType ScopeChain::typeOf(const std::string& name) const {
  for (size_t k = 0; k < graphs_.size(); ++k) {
    const Graph& g = *graphs_[k];
    if (auto it = g.initializers.find(name); it != g.initializers.end()) return it->second.dtype();
    if (const ValueInfo* info = g.findValueInfo(name)) return info->dtype;
    if (defined_[k].count(name)) return DataType::UNDEFINED;
  }
  return DataType::UNDEFINED;
}

}  // namespace kiln::ir
