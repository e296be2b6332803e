#include "context_binary/pipeline_users_section.h"

#include <set>

#include "context_binary/byte_io.h"

namespace kiln::ctxbin {
namespace {

Status corrupt(const std::string& why) {
  return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: pipeline_users section " + why);
}

// The users of `p` the section can name: node indices inside its graph.
std::vector<size_t> storableUsers(const CompiledPartition& p, const std::vector<size_t>& nodes) {
  std::vector<size_t> kept;
  for (size_t node : nodes) {
    if (p.graph && node < p.graph->nodes.size()) kept.push_back(node);
  }
  return kept;
}

}  // namespace

std::vector<std::byte> encodePipelineUsersSection(const std::vector<CompiledPartition>& partitions, uint64_t* records) {
  ByteWriter w;
  uint32_t count = 0;
  for (const auto& p : partitions) count += p.pipelineUsers.empty() ? 0 : 1;
  w.u32(count);
  for (const auto& p : partitions) {
    if (p.pipelineUsers.empty()) continue;
    w.str(p.name);
    w.u32(static_cast<uint32_t>(p.pipelineUsers.size()));
    for (const auto& [key, nodes] : p.pipelineUsers) {
      const std::vector<size_t> kept = storableUsers(p, nodes);
      w.str(key);
      w.u32(static_cast<uint32_t>(kept.size()));
      for (size_t node : kept) {
        w.u32(static_cast<uint32_t>(node));
        w.str(p.graph->nodes[node].name);
      }
    }
  }
  if (records) *records = count;
  return w.take();
}

Result<PipelineUsers> decodePipelineUsersSection(std::span<const std::byte> bytes) {
  PipelineUsers out;
  ByteReader r(bytes);
  const uint32_t records = r.count(8);
  for (uint32_t i = 0; i < records && r.ok(); ++i) {
    const std::string partition = r.str();
    std::map<std::string, std::vector<PipelineUser>> pipelines;
    const uint32_t keys = r.count(8);
    for (uint32_t k = 0; k < keys && r.ok(); ++k) {
      const std::string key = r.str();
      std::vector<PipelineUser> users;
      std::set<uint32_t> seen;
      const uint32_t nodes = r.count(8);
      for (uint32_t n = 0; n < nodes && r.ok(); ++n) {
        PipelineUser user;
        user.node = r.u32();
        user.name = r.str();
        if (r.ok() && !seen.insert(user.node).second) {
          return corrupt("lists node " + std::to_string(user.node) + " of partition '" + partition + "' twice for " + key);
        }
        users.push_back(std::move(user));
      }
      if (r.ok() && !pipelines.emplace(key, std::move(users)).second) {
        return corrupt("names pipeline " + key + " of partition '" + partition + "' twice");
      }
    }
    if (r.ok() && !out.emplace(partition, std::move(pipelines)).second) {
      return corrupt("names partition '" + partition + "' twice");
    }
  }
  if (!r.ok()) {
    return corrupt("does not parse (a count or length runs past its " + std::to_string(bytes.size()) + " bytes)");
  }
  if (r.left() != 0) return corrupt("has " + std::to_string(r.left()) + " bytes after its last record");
  return out;
}

Status attachPipelineUsers(PipelineUsers users, std::vector<CompiledPartition>& partitions) {
  for (auto& p : partitions) {
    auto record = users.find(p.name);
    if (record == users.end()) continue;
    const size_t nodes = p.graph ? p.graph->nodes.size() : 0;
    for (auto& [key, list] : record->second) {
      if (!p.spirv.count(key)) {
        return corrupt("names pipeline " + key + " for partition '" + p.name + "', which has no SPIR-V for it");
      }
      std::vector<size_t>& indices = p.pipelineUsers[key];
      for (const auto& user : list) {
        if (user.node >= nodes) {
          return corrupt("names node " + std::to_string(user.node) + " of partition '" + p.name + "', which has " +
                         std::to_string(nodes) + " nodes");
        }
        if (p.graph->nodes[user.node].name != user.name) {
          return corrupt("names node " + std::to_string(user.node) + " of partition '" + p.name + "' '" + user.name +
                         "', which the graph names '" + p.graph->nodes[user.node].name + "'");
        }
        indices.push_back(user.node);
      }
    }
    users.erase(record);
  }
  if (!users.empty()) {
    return corrupt("names partition '" + users.begin()->first + "', which the binary does not hold");
  }
  return Status::ok();
}

std::vector<ContextBinaryNodeRef> pipelineNodes(const std::vector<CompiledPartition>& partitions, const std::string& key) {
  std::vector<ContextBinaryNodeRef> nodes;
  for (const auto& p : partitions) {
    auto users = p.pipelineUsers.find(key);
    if (users == p.pipelineUsers.end()) continue;
    for (size_t node : users->second) {
      if (p.graph && node < p.graph->nodes.size()) {
        nodes.push_back({p.name, static_cast<int64_t>(node), p.graph->nodes[node].name});
      }
    }
  }
  return nodes;
}

}  // namespace kiln::ctxbin
