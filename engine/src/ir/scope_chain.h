// What a graph sees: its own values, then, for names it does not define, those of the graphs enclosing it (a
// body reads outer-scope values by name). Passes that look through bodies resolve initializers and types
// here.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

class ScopeChain {
 public:
  // `graph` and the graphs around it, innermost first; all of them must outlive the chain and stay unchanged.
  ScopeChain(const Graph& graph, const std::vector<const Graph*>& enclosing);

  // The innermost graph whose initializer `name` is the one `graph` reads; nullptr when there is none or a
  // graph input or node output of a graph nearer in shadows it. The caller applies its own test (fed, shape).
  const Graph* initializerOwner(const std::string& name) const;

  // The initializer, declared or inferred type of `name` as `graph` reads it; UNDEFINED when unknown.
  DataType typeOf(const std::string& name) const;

 private:
  std::vector<const Graph*> graphs_;            // innermost first
  std::vector<std::set<std::string>> defined_;  // per graph: its inputs and node outputs
};

}  // namespace kiln::ir
