#include "ir/cast_rewriter.h"

#include <utility>

namespace kiln::ir {

CastRewriter::CastRewriter(Graph& graph, DataType rewritten, CastNaming naming)
    : graph_(graph), rewritten_(rewritten), naming_(std::move(naming)) {}

void CastRewriter::setName(const std::string& value, DataType type, const std::string& name) {
  names(type)[value] = name;
}

std::string CastRewriter::resolve(const std::string& value, DataType type) {
  const bool wantsRewritten = type == rewritten_;
  auto& wanted = names(type);
  if (auto it = wanted.find(value); it != wanted.end()) return it->second;
  auto& have = wantsRewritten ? originalNames_ : rewrittenNames_;
  if (!wantsRewritten && !have.count(value)) return wanted[value] = value;  // never rewritten
  const std::string source = have.count(value) ? have[value] : value;
  const std::string name = value + (wantsRewritten ? naming_.rewrittenSuffix : naming_.originalSuffix);
  addValue(name, value, type);
  emitCast(source, name, type);
  wanted[value] = name;
  return name;
}

void CastRewriter::addValue(const std::string& name, const std::string& like, DataType type) {
  ValueInfo info;
  if (const ValueInfo* known = graph_.findValueInfo(like)) info = *known;
  info.name = name;
  info.dtype = type;
  graph_.valueInfo[name] = info;
}

void CastRewriter::emitCast(const std::string& from, const std::string& to, DataType type) {
  Node cast;
  cast.name = naming_.castPrefix + to;
  cast.opType = "Cast";
  cast.inputs = {from};
  cast.outputs = {to};
  Attribute attribute;
  attribute.name = "to";
  attribute.type = AttributeType::INT;
  attribute.i = static_cast<int64_t>(type);
  cast.attributes["to"] = attribute;
  nodes_.push_back(std::move(cast));
  casts_++;
}

}  // namespace kiln::ir
