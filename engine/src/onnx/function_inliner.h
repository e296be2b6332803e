// Model-local ONNX functions (ModelProto.functions): the engine runs them by inlining each call at load, so
// every execution provider sees only the function's own nodes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "kiln/status.h"

namespace kiln::onnx_io {

// "domain:name": how ONNX (and kiln's subgraph paths) name a function.
std::string functionId(const std::string& domain, const std::string& name);

// The prefix the nodes and internal values of call `callName` get when inlined: "<callName>/".
std::string inlinedPrefix(const std::string& callName);

// Replaces every call of a model-local function, in the main graph and in every If/Loop/Scan body, by the
// function's nodes: formal inputs and outputs become the call's values, internal values and node names get
// inlinedPrefix(call name or "<OpType>_<index>"), attribute references take the call's attribute (or are
// dropped when the call has none), nested calls are inlined in turn; the function's opset imports are added
// to the model's when missing. INVALID_GRAPH for a function that calls itself (more than 32 levels deep) or
// calls that would grow a graph past 2^20 nodes.
Status inlineLocalFunctions(onnx::ModelProto& model);

}  // namespace kiln::onnx_io
