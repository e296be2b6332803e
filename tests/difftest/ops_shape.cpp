// Op makers that move data without arithmetic: Transpose, Reshape, Flatten, Squeeze/Unsqueeze, Concat, Slice,
// Gather, Split, Expand, Tile, Pad, DepthToSpace/SpaceToDepth. Their outputs are exact when their inputs are.
#include <algorithm>
#include <numeric>

#include "graph_generator.h"

namespace kiln::difftest {
namespace {

// Any tensor value of at least `minRank` dims and at most `maxElements` elements (float, or bool for moves).
std::optional<GenValue> pickTensor(GraphGenerator& gen, int minRank, int64_t maxElements = 4096) {
  return gen.pickValue([&](const GenValue& v) {
    return (v.isFloat() || v.type == onnx::TensorProto::BOOL) && v.rank() >= minRank && v.numel() <= maxElements;
  });
}

GenValue like(GraphGenerator& gen, const GenValue& x, const std::string& op, std::vector<int64_t> dims) {
  return {gen.fresh(op), x.type, std::move(dims), x.bound, x.exact, x.slack};
}

bool transpose(GraphGenerator& gen) {
  auto x = pickTensor(gen, 2);
  if (!x) return false;
  std::vector<int64_t> perm(static_cast<size_t>(x->rank()));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), gen.rng());
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x->dims[static_cast<size_t>(p)]);
  GenValue out = like(gen, *x, "Transpose", dims);
  testing::attrInts(gen.node("Transpose", {x->name}, {out.name}), "perm", perm);
  gen.addValue(out);
  return true;
}

// Reshape merging two neighbouring dims, or splitting a dim into two; sometimes written with -1 or 0.
bool reshape(GraphGenerator& gen) {
  auto x = pickTensor(gen, 1);
  if (!x || x->numel() == 0) return false;
  std::vector<int64_t> dims = x->dims;
  const size_t at = static_cast<size_t>(gen.uniformInt(0, x->rank() - 1));
  if (at + 1 < dims.size() && gen.chance(0.5)) {
    dims[at] *= dims[at + 1];
    dims.erase(dims.begin() + static_cast<long>(at) + 1);
  } else if (dims[at] % 2 == 0 && dims.size() < 5) {
    dims[at] /= 2;
    dims.insert(dims.begin() + static_cast<long>(at) + 1, 2);
  } else {
    dims.insert(dims.begin() + static_cast<long>(at), 1);
  }
  std::vector<int64_t> spec = dims;
  if (gen.chance(0.4)) spec[static_cast<size_t>(gen.uniformInt(0, static_cast<int64_t>(spec.size()) - 1))] = -1;
  GenValue out = like(gen, *x, "Reshape", dims);
  gen.node("Reshape", {x->name, gen.int64Const({static_cast<int64_t>(spec.size())}, spec)}, {out.name});
  gen.addValue(out);
  return true;
}

bool flatten(GraphGenerator& gen) {
  auto x = pickTensor(gen, 1);
  if (!x) return false;
  const int64_t axis = gen.uniformInt(-x->rank(), x->rank());
  const int64_t split = axis < 0 ? axis + x->rank() : axis;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x->rank(); ++i) (i < split ? outer : inner) *= x->dims[static_cast<size_t>(i)];
  GenValue out = like(gen, *x, "Flatten", {outer, inner});
  testing::attrInt(gen.node("Flatten", {x->name}, {out.name}), "axis", axis);
  gen.addValue(out);
  return true;
}

bool squeezeOrUnsqueeze(GraphGenerator& gen) {
  auto x = pickTensor(gen, 0);
  if (!x) return false;
  std::vector<int64_t> ones;
  for (int64_t i = 0; i < x->rank(); ++i) {
    if (x->dims[static_cast<size_t>(i)] == 1) ones.push_back(gen.chance(0.5) ? i : i - x->rank());
  }
  if (!ones.empty() && gen.chance(0.6)) {
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < x->rank(); ++i) {
      const bool removed = std::any_of(ones.begin(), ones.end(), [&](int64_t a) { return (a + x->rank()) % x->rank() == i; });
      if (!removed) dims.push_back(x->dims[static_cast<size_t>(i)]);
    }
    GenValue out = like(gen, *x, "Squeeze", dims);
    gen.node("Squeeze", {x->name, gen.int64Const({static_cast<int64_t>(ones.size())}, ones)}, {out.name});
    gen.addValue(out);
    return true;
  }
  if (x->rank() >= 5) return false;
  const int64_t axis = gen.uniformInt(0, x->rank());
  std::vector<int64_t> dims = x->dims;
  dims.insert(dims.begin() + axis, 1);
  GenValue out = like(gen, *x, "Unsqueeze", dims);
  const int64_t written = gen.chance(0.3) ? axis - x->rank() - 1 : axis;
  gen.node("Unsqueeze", {x->name, gen.int64Const({1}, {written})}, {out.name});
  gen.addValue(out);
  return true;
}

// Concat of a value with another of the same shape (or itself) along a random axis.
bool concat(GraphGenerator& gen) {
  auto a = pickTensor(gen, 1);
  if (!a) return false;
  auto b = gen.pickValue([&](const GenValue& v) { return v.type == a->type && v.rank() == a->rank(); });
  const int64_t axis = gen.uniformInt(0, a->rank() - 1);
  for (int64_t i = 0; i < a->rank(); ++i) {
    if (i != axis && b->dims[static_cast<size_t>(i)] != a->dims[static_cast<size_t>(i)]) b = a;
  }
  std::vector<int64_t> dims = a->dims;
  dims[static_cast<size_t>(axis)] += b->dims[static_cast<size_t>(axis)];
  GenValue out{gen.fresh("Concat"), a->type, dims, std::max(a->bound, b->bound), a->exact && b->exact,
               std::max(a->slack, b->slack)};
  testing::attrInt(gen.node("Concat", {a->name, b->name}, {out.name}), "axis", gen.chance(0.3) ? axis - a->rank() : axis);
  gen.addValue(out);
  return true;
}

// Slice along one or two axes with random starts, ends (sometimes out of range) and steps (sometimes negative).
bool slice(GraphGenerator& gen) {
  auto x = pickTensor(gen, 1);
  if (!x) return false;
  std::vector<int64_t> starts, ends, axes, steps, dims = x->dims;
  const int count = x->rank() > 1 && gen.chance(0.4) ? 2 : 1;
  std::vector<int64_t> order(static_cast<size_t>(x->rank()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), gen.rng());
  for (int k = 0; k < count; ++k) {
    const int64_t axis = order[static_cast<size_t>(k)], n = dims[static_cast<size_t>(axis)];
    const int64_t step = gen.pick(std::vector<int64_t>{1, 1, 2, -1, 3});
    int64_t start = gen.uniformInt(0, std::max<int64_t>(0, n - 1)), end;
    int64_t length;
    if (step > 0) {
      end = gen.uniformInt(start, n + 2);
      length = std::max<int64_t>(0, (std::min(end, n) - start + step - 1) / step);
    } else {
      const bool toFront = gen.chance(0.3);  // an end below -n: the slice runs through index 0
      end = toFront ? -n - 5 : gen.uniformInt(0, start);
      const int64_t stop = toFront ? -1 : end;
      length = (start - stop + (-step) - 1) / (-step);
    }
    if (n == 0) length = 0;
    starts.push_back(gen.chance(0.2) && start > 0 ? start - n : start);
    ends.push_back(end);
    axes.push_back(gen.chance(0.3) ? axis - x->rank() : axis);
    steps.push_back(step);
    dims[static_cast<size_t>(axis)] = length;
  }
  const auto len = static_cast<int64_t>(starts.size());
  GenValue out = like(gen, *x, "Slice", dims);
  gen.node("Slice", {x->name, gen.int64Const({len}, starts), gen.int64Const({len}, ends), gen.int64Const({len}, axes),
                     gen.int64Const({len}, steps)}, {out.name});
  gen.addValue(out);
  return true;
}

bool gather(GraphGenerator& gen) {
  auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.rank() >= 1 && v.numel() > 0; });
  if (!x) return false;
  const int64_t axis = gen.uniformInt(0, x->rank() - 1), n = x->dims[static_cast<size_t>(axis)];
  std::vector<int64_t> indexDims = gen.chance(0.3) ? std::vector<int64_t>{} : std::vector<int64_t>{gen.uniformInt(1, 4)};
  if (gen.chance(0.2)) indexDims.push_back(2);
  int64_t count = 1;
  for (int64_t d : indexDims) count *= d;
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < count; ++i) indices.push_back(gen.uniformInt(-n, n - 1));
  std::vector<int64_t> dims(x->dims.begin(), x->dims.begin() + axis);
  dims.insert(dims.end(), indexDims.begin(), indexDims.end());
  dims.insert(dims.end(), x->dims.begin() + axis + 1, x->dims.end());
  GenValue out = like(gen, *x, "Gather", dims);
  testing::attrInt(gen.node("Gather", {x->name, gen.int64Const(indexDims, indices)}, {out.name}), "axis", axis);
  gen.addValue(out);
  return true;
}

// Split into two or three parts, given sizes or (opset 13+) equal parts; every part becomes a value.
bool split(GraphGenerator& gen) {
  auto x = gen.pickValue([](const GenValue& v) {
    return v.isFloat() && std::any_of(v.dims.begin(), v.dims.end(), [](int64_t d) { return d >= 2; });
  });
  if (!x) return false;
  std::vector<int64_t> candidates;
  for (int64_t i = 0; i < x->rank(); ++i) {
    if (x->dims[static_cast<size_t>(i)] >= 2) candidates.push_back(i);
  }
  const int64_t axis = gen.pick(candidates), n = x->dims[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  if (n % 2 == 0 && gen.chance(0.4)) {
    sizes = {n / 2, n / 2};
  } else {
    const int64_t first = gen.uniformInt(1, n - 1);
    sizes = {first, n - first};
  }
  const bool given = !(sizes[0] == sizes[1] && gen.chance(0.5));
  std::vector<std::string> inputs = {x->name};
  if (given) inputs.push_back(gen.int64Const({static_cast<int64_t>(sizes.size())}, sizes));
  std::vector<GenValue> parts;
  std::vector<std::string> names;
  for (int64_t size : sizes) {
    std::vector<int64_t> dims = x->dims;
    dims[static_cast<size_t>(axis)] = size;
    parts.push_back(like(gen, *x, "Split", dims));
    names.push_back(parts.back().name);
  }
  testing::attrInt(gen.node("Split", inputs, names), "axis", axis);
  for (GenValue& part : parts) gen.addValue(part);
  return true;
}

bool expandOrTile(GraphGenerator& gen) {
  auto x = pickTensor(gen, 1, 512);
  if (!x) return false;
  if (gen.chance(0.5)) {
    std::vector<int64_t> target = x->dims;
    for (int64_t& d : target) {
      if (d == 1 && gen.chance(0.7)) d = gen.uniformInt(2, 4);
    }
    if (gen.chance(0.3)) target.insert(target.begin(), gen.uniformInt(1, 3));
    std::vector<int64_t> written = target;  // a 1 in the target keeps the input's dim
    for (size_t i = 0; i < written.size(); ++i) {
      const size_t offset = written.size() - x->dims.size();
      if (i >= offset && x->dims[i - offset] != 1 && gen.chance(0.3)) written[i] = 1;
    }
    GenValue out = like(gen, *x, "Expand", broadcastShape(x->dims, target));
    gen.node("Expand", {x->name, gen.int64Const({static_cast<int64_t>(written.size())}, written)}, {out.name});
    gen.addValue(out);
    return true;
  }
  std::vector<int64_t> repeats, dims = x->dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    repeats.push_back(gen.uniformInt(1, 3));
    dims[i] *= repeats.back();
  }
  GenValue out = like(gen, *x, "Tile", dims);
  gen.node("Tile", {x->name, gen.int64Const({x->rank()}, repeats)}, {out.name});
  gen.addValue(out);
  return true;
}

// Pad in constant (with a value), reflect or edge mode; reflect pads stay below the dim.
bool pad(GraphGenerator& gen) {
  auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.rank() >= 1 && v.numel() > 0; });
  if (!x) return false;
  const std::string mode = gen.pick(std::vector<std::string>{"constant", "constant", "reflect", "edge"});
  std::vector<int64_t> pads(static_cast<size_t>(2 * x->rank()), 0), dims = x->dims;
  for (int64_t i = 0; i < x->rank(); ++i) {
    const int64_t n = x->dims[static_cast<size_t>(i)];
    const int64_t most = mode == "reflect" ? std::min<int64_t>(2, n - 1) : 2;
    if (i < x->rank() - 2 && gen.chance(0.7)) continue;  // mostly the spatial dims
    pads[static_cast<size_t>(i)] = gen.uniformInt(0, most);
    pads[static_cast<size_t>(i + x->rank())] = gen.uniformInt(mode == "constant" && n > 1 ? -1 : 0, most);
    dims[static_cast<size_t>(i)] += pads[static_cast<size_t>(i)] + pads[static_cast<size_t>(i + x->rank())];
  }
  std::vector<std::string> inputs = {x->name, gen.int64Const({2 * x->rank()}, pads)};
  const float value = static_cast<float>(gen.uniform(-1, 1));
  if (mode == "constant" && gen.chance(0.5)) inputs.push_back(gen.floatConst({}, {value}));
  GenValue out = like(gen, *x, "Pad", dims);
  out.bound = std::max(out.bound, 1.0);
  testing::attrString(gen.node("Pad", inputs, {out.name}), "mode", mode);
  gen.addValue(out);
  return true;
}

bool depthSpace(GraphGenerator& gen) {
  auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.rank() == 4 && v.numel() > 0; });
  if (!x) return false;
  const int64_t b = 2;
  std::vector<int64_t> d = x->dims;
  if (d[1] % (b * b) == 0 && gen.chance(0.5)) {
    GenValue out = like(gen, *x, "DepthToSpace", {d[0], d[1] / (b * b), d[2] * b, d[3] * b});
    onnx::NodeProto& node = gen.node("DepthToSpace", {x->name}, {out.name});
    testing::attrInt(node, "blocksize", b);
    testing::attrString(node, "mode", gen.chance(0.5) ? "DCR" : "CRD");
    gen.addValue(out);
    return true;
  }
  if (d[2] % b != 0 || d[3] % b != 0) return false;
  GenValue out = like(gen, *x, "SpaceToDepth", {d[0], d[1] * b * b, d[2] / b, d[3] / b});
  testing::attrInt(gen.node("SpaceToDepth", {x->name}, {out.name}), "blocksize", b);
  gen.addValue(out);
  return true;
}

// Trilu (upper or lower, a diagonal offset) of the last two dims.
bool trilu(GraphGenerator& gen) {
  auto x = pickTensor(gen, 2);
  if (!x || !x->isFloat()) return false;
  GenValue out = like(gen, *x, "Trilu", x->dims);
  std::vector<std::string> inputs = {x->name};
  if (gen.chance(0.6)) inputs.push_back(gen.int64Const({}, {gen.uniformInt(-2, 2)}));
  testing::attrInt(gen.node("Trilu", inputs, {out.name}), "upper", gen.chance(0.5));
  gen.addValue(out);
  return true;
}

// GatherElements along a random axis with indices (some negative) of a shape no larger than the input's.
bool gatherElements(GraphGenerator& gen) {
  auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.rank() >= 1 && v.numel() > 0 && v.numel() <= 4096; });
  if (!x) return false;
  const int64_t axis = gen.uniformInt(0, x->rank() - 1), n = x->dims[static_cast<size_t>(axis)];
  std::vector<int64_t> dims = x->dims;
  for (int64_t& d : dims) d = gen.uniformInt(1, d);
  dims[static_cast<size_t>(axis)] = gen.uniformInt(1, 4);
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < count; ++i) indices.push_back(gen.uniformInt(-n, n - 1));
  GenValue out = like(gen, *x, "GatherElements", dims);
  testing::attrInt(gen.node("GatherElements", {x->name, gen.int64Const(dims, indices)}, {out.name}), "axis",
                   gen.chance(0.3) ? axis - x->rank() : axis);
  gen.addValue(out);
  return true;
}

}  // namespace

std::vector<OpKind> shapeOps() {
  return {{"Transpose", transpose}, {"Reshape", reshape}, {"Flatten", flatten}, {"Squeeze", squeezeOrUnsqueeze},
          {"Concat", concat},       {"Slice", slice},     {"Gather", gather},   {"Split", split},
          {"Expand", expandOrTile}, {"Pad", pad},         {"DepthToSpace", depthSpace},
          {"Trilu", trilu},         {"GatherElements", gatherElements}};
}

}  // namespace kiln::difftest
