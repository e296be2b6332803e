// Element-wise op makers: unary math, binary arithmetic with broadcasting, comparisons and Where, Clip, Cast,
// variadic Sum/Mean/Max, and float16 round trips.
#include <algorithm>
#include <cmath>

#include "graph_generator.h"

namespace kiln::difftest {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

struct UnarySpec {
  double maxBound = 1e4;       // inputs beyond this are not drawn (Exp, Softplus)
  bool positiveInput = false;  // the op needs x >= 0.5 (Log, Sqrt, Reciprocal): made with GraphGenerator::positive
  bool exactInput = false;     // a discontinuous op: only exact inputs
  bool keepsExact = false;     // exact in, exact out (moves, Relu, Abs, Floor...)
  std::function<double(double)> bound = [](double b) { return b; };  // output bound from the input's
  std::function<double(double)> gain = [](double) { return 1.0; };  // slack multiplier (the slope's bound)
  std::function<void(GraphGenerator&, onnx::NodeProto&)> attributes = {};
};

OpKind unary(const std::string& op, UnarySpec spec) {
  return {op, [op, spec](GraphGenerator& gen) {
            auto x = gen.pickValue([&](const GenValue& v) {
              return v.isFloat() && v.bound <= spec.maxBound && (!spec.exactInput || v.exact);
            });
            if (!x) return false;
            GenValue in = spec.positiveInput ? gen.positive(*x) : *x;
            GenValue out{gen.fresh(op), kFloat, in.dims, spec.bound(in.bound), spec.keepsExact && in.exact,
                         in.slack * spec.gain(in.bound)};
            onnx::NodeProto& node = gen.node(op, {in.name}, {out.name});
            if (spec.attributes) spec.attributes(gen, node);
            gen.addValue(out);
            return true;
          }};
}

// A second operand for `a`: an existing float value that broadcasts with it, else a new initializer whose shape
// is a suffix of a's with some dims set to 1.
GenValue broadcastPartner(GraphGenerator& gen, const GenValue& a, bool positive) {
  if (gen.chance(0.5)) {
    auto b = gen.pickValue([&](const GenValue& v) {
      return v.isFloat() && v.name != a.name && broadcastable(a.dims, v.dims) && v.bound <= 1e3;
    });
    if (b) return positive ? gen.positive(*b) : *b;
  }
  std::vector<int64_t> dims(a.dims.begin() + gen.uniformInt(0, a.rank()), a.dims.end());
  for (int64_t& d : dims) {
    if (gen.chance(0.4)) d = 1;
  }
  const double lo = positive ? 0.5 : -1.5, hi = positive ? 2.0 : 1.5;
  return {gen.randomFloatConst(dims, lo, hi), kFloat, dims, 2.0, true, 0};
}

struct BinarySpec {
  bool positiveRight = false;
  bool unidirectional = false;  // the right operand broadcasts to the left's shape (PRelu's slope), never the reverse
  bool keepsExact = false;
  double maxBound = 1e3;
  std::function<double(const GenValue&, const GenValue&)> bound;
  std::function<double(const GenValue&, const GenValue&)> slack;
};

OpKind binary(const std::string& op, BinarySpec spec) {
  return {op, [op, spec](GraphGenerator& gen) {
            auto a = gen.pickValue([&](const GenValue& v) { return v.isFloat() && v.bound <= spec.maxBound; });
            if (!a) return false;
            GenValue b = broadcastPartner(gen, *a, spec.positiveRight);
            if (spec.unidirectional && broadcastShape(a->dims, b.dims) != a->dims) return false;
            const bool swap = !spec.positiveRight && !spec.unidirectional && gen.chance(0.3);  // broadcasting both ways
            const GenValue& left = swap ? b : *a;
            const GenValue& right = swap ? *a : b;
            GenValue out{gen.fresh(op), kFloat, broadcastShape(left.dims, right.dims), spec.bound(left, right),
                         spec.keepsExact && left.exact && right.exact, spec.slack(left, right)};
            gen.node(op, {left.name, right.name}, {out.name});
            gen.addValue(out);
            return true;
          }};
}

double sumSlack(const GenValue& a, const GenValue& b) { return a.slack + b.slack; }
double maxSlack(const GenValue& a, const GenValue& b) { return std::max(a.slack, b.slack); }

// Greater/Less/Equal of exact values, then Where choosing between two floats (or a Cast of the bool to float).
OpKind compareAndSelect(const std::string& op) {
  return {op, [op](GraphGenerator& gen) {
            auto a = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.exact; });
            if (!a) return false;
            // Equal needs ties to be interesting: compare with a value that often repeats (0 after Relu, Floor).
            GenValue b = op == "Equal" ? GenValue{gen.floatConst({}, {0.0f}), kFloat, {}, 0, true, 0}
                                       : broadcastPartner(gen, *a, false);
            if (!b.exact) return false;
            GenValue cond{gen.fresh(op), kBool, broadcastShape(a->dims, b.dims), 1, true, 0};
            gen.node(op, {a->name, b.name}, {cond.name});
            gen.addValue(cond);
            if (gen.chance(0.3)) {
              GenValue n{gen.fresh("Not"), kBool, cond.dims, 1, true, 0};
              gen.node("Not", {cond.name}, {n.name});
              gen.addValue(n);
              cond = n;
            }
            if (gen.chance(0.3)) {
              GenValue f{gen.fresh("Cast"), kFloat, cond.dims, 1, true, 0};
              testing::attrInt(gen.node("Cast", {cond.name}, {f.name}), "to", kFloat);
              gen.addValue(f);
              return true;
            }
            GenValue other = broadcastPartner(gen, *a, false);
            if (!broadcastable(broadcastShape(cond.dims, a->dims), other.dims))  // broadcasting is not transitive
              other = {gen.floatConst({}, {0.0f}), kFloat, {}, 0, true, 0};
            GenValue out{gen.fresh("Where"), kFloat, broadcastShape(broadcastShape(cond.dims, a->dims), other.dims),
                         std::max(a->bound, other.bound), a->exact && other.exact, std::max(a->slack, other.slack)};
            gen.node("Where", {cond.name, a->name, other.name}, {out.name});
            gen.addValue(out);
            return true;
          }};
}

// Clip with min and max as inputs (either may be left out).
OpKind clip() {
  return {"Clip", [](GraphGenerator& gen) {
            auto x = gen.pickValue([](const GenValue& v) { return v.isFloat(); });
            if (!x) return false;
            const float lo = static_cast<float>(gen.uniform(-1.5, 0.0)), hi = static_cast<float>(gen.uniform(0.1, 1.5));
            std::vector<std::string> inputs = {x->name, gen.chance(0.8) ? gen.floatConst({}, {lo}) : ""};
            if (gen.chance(0.8)) inputs.push_back(gen.floatConst({}, {hi}));
            GenValue out{gen.fresh("Clip"), kFloat, x->dims, std::min(x->bound, 1.5), x->exact, x->slack};
            gen.node("Clip", inputs, {out.name});
            gen.addValue(out);
            return true;
          }};
}

// Sum, Mean or Max of two or three values that broadcast together.
OpKind variadic(const std::string& op) {
  return {op, [op](GraphGenerator& gen) {
            auto a = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.bound <= 1e3; });
            if (!a) return false;
            std::vector<GenValue> operands = {*a, broadcastPartner(gen, *a, false)};
            // A third operand must broadcast with the first two's result, not only with the first.
            GenValue third = broadcastPartner(gen, *a, false);
            if (gen.chance(0.5) && broadcastable(broadcastShape(a->dims, operands[1].dims), third.dims))
              operands.push_back(third);
            GenValue out{gen.fresh(op), kFloat, {}, 0, op == "Max", 0};
            std::vector<std::string> names;
            for (const GenValue& v : operands) {
              out.dims = broadcastShape(out.dims, v.dims);
              out.bound = op == "Max" ? std::max(out.bound, v.bound) : out.bound + v.bound;
              out.exact = out.exact && v.exact;
              out.slack += v.slack;
              names.push_back(v.name);
            }
            gen.node(op, names, {out.name});
            gen.addValue(out);
            return true;
          }};
}

// Cast to float16, an op computed in float16, Cast back: float16 storage and arithmetic. Allows one float16 ulp of
// the result (and the op's own rounding) as slack.
OpKind float16RoundTrip() {
  return {"Float16", [](GraphGenerator& gen) {
            auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.bound <= 100; });
            if (!x) return false;
            const int32_t kHalf = onnx::TensorProto::FLOAT16;
            const std::string half = gen.fresh("to_half"), computed = gen.fresh("half_op");
            testing::attrInt(gen.node("Cast", {x->name}, {half}), "to", kHalf);
            const std::string op = gen.pick(std::vector<std::string>{"Relu", "Sigmoid", "Neg", "Add", "Mul"});
            double bound = x->bound;
            if (op == "Add" || op == "Mul") {
              const std::string c = gen.typedConst(kHalf, {}, {gen.uniform(0.25, 1.5)});
              gen.node(op, {half, c}, {computed});
              bound = op == "Add" ? bound + 1.5 : bound * 1.5;
            } else {
              gen.node(op, {half}, {computed});
              if (op == "Sigmoid") bound = 1;
            }
            GenValue out{gen.fresh("from_half"), kFloat, x->dims, bound, false, x->slack + 2 * bound / 1024};
            testing::attrInt(gen.node("Cast", {computed}, {out.name}), "to", kFloat);
            gen.addValue(out);
            return true;
          }};
}

// Cast of an exact float to int64 and back (truncation toward zero).
OpKind castToInt() {
  return {"CastInt64", [](GraphGenerator& gen) {
            auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.exact && v.bound <= 1e6; });
            if (!x) return false;
            const std::string i = gen.fresh("to_int");
            testing::attrInt(gen.node("Cast", {x->name}, {i}), "to", onnx::TensorProto::INT64);
            GenValue out{gen.fresh("from_int"), kFloat, x->dims, x->bound, true, 0};
            testing::attrInt(gen.node("Cast", {i}, {out.name}), "to", kFloat);
            gen.addValue(out);
            return true;
          }};
}

}  // namespace

std::vector<OpKind> elementwiseOps() {
  auto one = [](double) { return 1.0; };
  auto alpha = [](const char* name, double lo, double hi) {
    return [name, lo, hi](GraphGenerator& gen, onnx::NodeProto& node) {
      testing::attrFloat(node, name, static_cast<float>(gen.uniform(lo, hi)));
    };
  };
  std::vector<OpKind> ops = {
      unary("Relu", {.keepsExact = true}),
      unary("Abs", {.keepsExact = true}),
      unary("Neg", {.keepsExact = true}),
      unary("LeakyRelu", {.attributes = alpha("alpha", 0.01, 0.5)}),
      unary("Elu", {.bound = [](double b) { return b + 1; }, .attributes = alpha("alpha", 0.5, 1.5)}),
      unary("Selu", {.bound = [](double b) { return 1.76 * (b + 1); }, .gain = [](double) { return 1.76; }}),
      unary("Sigmoid", {.bound = one}),
      unary("HardSigmoid", {.bound = one}),
      unary("HardSwish", {.bound = [](double b) { return b + 1; }, .gain = [](double b) { return 1 + b / 3; }}),
      unary("Tanh", {.bound = one}),
      unary("Softsign", {.bound = one}),
      unary("Softplus", {.maxBound = 30, .bound = [](double b) { return b + 1; }}),
      unary("Erf", {.bound = one, .gain = [](double) { return 1.13; }}),
      unary("Sin", {.maxBound = 100, .bound = one}),
      unary("Cos", {.maxBound = 100, .bound = one}),
      unary("Exp", {.maxBound = 6, .bound = [](double b) { return std::exp(b); },
                    .gain = [](double b) { return std::exp(b); }}),
      unary("Log", {.positiveInput = true, .bound = [](double b) { return std::max(0.7, std::log(b)); },
                    .gain = [](double) { return 2.0; }}),
      unary("Sqrt", {.positiveInput = true, .bound = [](double b) { return std::sqrt(b); }}),
      unary("Reciprocal", {.positiveInput = true, .bound = [](double) { return 2.0; },
                           .gain = [](double) { return 4.0; }}),
      unary("Floor", {.exactInput = true, .keepsExact = true, .bound = [](double b) { return b + 1; }}),
      unary("Ceil", {.exactInput = true, .keepsExact = true, .bound = [](double b) { return b + 1; }}),
      unary("Round", {.exactInput = true, .keepsExact = true, .bound = [](double b) { return b + 1; }}),
      unary("Sign", {.exactInput = true, .keepsExact = true, .bound = one}),
      unary("Identity", {.keepsExact = true}),
      binary("Add", {.bound = [](auto& a, auto& b) { return a.bound + b.bound; }, .slack = sumSlack}),
      binary("Sub", {.bound = [](auto& a, auto& b) { return a.bound + b.bound; }, .slack = sumSlack}),
      binary("Mul", {.maxBound = 100, .bound = [](auto& a, auto& b) { return a.bound * b.bound; },
                     .slack = [](auto& a, auto& b) { return a.slack * b.bound + b.slack * a.bound; }}),
      binary("Div", {.positiveRight = true, .bound = [](auto& a, auto&) { return 2 * a.bound; },
                     .slack = [](auto& a, auto& b) { return 2 * a.slack + 4 * a.bound * b.slack; }}),
      binary("Max", {.keepsExact = true, .bound = [](auto& a, auto& b) { return std::max(a.bound, b.bound); },
                     .slack = maxSlack}),
      binary("Min", {.keepsExact = true, .bound = [](auto& a, auto& b) { return std::max(a.bound, b.bound); },
                     .slack = maxSlack}),
      binary("PRelu", {.unidirectional = true, .bound = [](auto& a, auto& b) { return a.bound * std::max(1.0, b.bound); },
                       .slack = [](auto& a, auto& b) { return a.slack * std::max(1.0, b.bound); }}),
      compareAndSelect("Greater"),
      compareAndSelect("Less"),
      compareAndSelect("Equal"),
      clip(),
      variadic("Sum"),
      variadic("Mean"),
      variadic("Max"),
      float16RoundTrip(),
      castToInt(),
  };
  // Pow: a positive base to a small constant exponent.
  ops.push_back({"Pow", [](GraphGenerator& gen) {
                   auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.bound <= 30; });
                   if (!x) return false;
                   GenValue base = gen.positive(*x);
                   const float e = gen.pick(std::vector<float>{0.5f, 2.0f, 3.0f, -1.0f, 1.5f});
                   const double bound = std::pow(base.bound, std::max(1.0f, e)) + 2;
                   GenValue out{gen.fresh("Pow"), kFloat, base.dims, bound, false,
                                base.slack * std::abs(e) * std::pow(base.bound, std::max(0.0f, e - 1)) * 4};
                   gen.node("Pow", {base.name, gen.floatConst({}, {e})}, {out.name});
                   gen.addValue(out);
                   return true;
                 }});
  return ops;
}

}  // namespace kiln::difftest
