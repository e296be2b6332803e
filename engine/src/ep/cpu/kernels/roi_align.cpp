// RoiAlign (opsets 10 and 16): pools each region of interest of a 4-D feature map X [N, C, H, W] into an
// [output_height, output_width] grid of bins; Y is [num_rois, C, output_height, output_width].
//
// Follows the ONNX reference and onnxruntime, computed in double:
// - rois are [x1, y1, x2, y2] scaled by spatial_scale; half_pixel (the opset-16 default) shifts them by -0.5,
//   output_half_pixel (opset 10's only behaviour) does not and instead widens rois narrower than 1 to 1;
// - each bin averages (or maxes) a grid of sampling_ratio^2 points, or ceil(roi_size / output_size) per axis
//   when sampling_ratio is 0; a point is bilinearly interpolated with coordinates clamped to the map, and a
//   point beyond one pixel outside the map counts as 0;
// - max mode keeps the quirk of both implementations: a point's value is the largest of its four weighted
//   corner terms (w_i * pixel_i), not the interpolated value, and the bin takes the maximum of those.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// One sampling point: four pixel offsets into an H*W plane and their bilinear weights.
struct SamplePoint {
  std::array<int64_t, 4> pos{};
  std::array<double, 4> weight{};
};

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(const KernelInfo& info)
      : label_(info.node.opType),
        outH_(info.node.attrInt("output_height", 1)),
        outW_(info.node.attrInt("output_width", 1)),
        samplingRatio_(info.node.attrInt("sampling_ratio", 0)),
        spatialScale_(info.node.attrFloat("spatial_scale", 1.0f)) {}

  Status init(const KernelInfo& info) {
    const std::string mode = info.node.attrString("mode", "avg");
    if (mode != "avg" && mode != "max")
      return nodeError(label_, "unknown mode '" + mode + "' (use avg or max)");
    maxMode_ = mode == "max";
    const std::string transform = info.opset >= 16
                                      ? info.node.attrString("coordinate_transformation_mode", "half_pixel")
                                      : "output_half_pixel";
    if (transform != "half_pixel" && transform != "output_half_pixel") {
      return nodeError(label_, "unknown coordinate_transformation_mode '" + transform +
                                   "' (use half_pixel or output_half_pixel)");
    }
    halfPixel_ = transform == "half_pixel";
    if (outH_ < 1 || outW_ < 1) return nodeError(label_, "output_height and output_width must be >= 1");
    if (samplingRatio_ < 0) return nodeError(label_, "sampling_ratio must be >= 0");
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* rois = ctx.input(1);
    const Tensor* batchTensor = ctx.input(2);
    if (!x || !rois || !batchTensor) return nodeError(label_, "needs inputs 'X', 'rois' and 'batch_indices'");
    if (x->rank() != 4)
      return nodeError(label_, "X must be 4-D [N, C, H, W], got " + shapeToString(x->shape()));
    if (rois->dtype() != x->dtype()) return nodeError(label_, "rois must have X's element type");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> batchIndices,
                          readIndexInput(label_, *batchTensor, "input 'batch_indices'"));
    const int64_t numRois = static_cast<int64_t>(batchIndices.size());
    if (rois->rank() != 2 || rois->dim(1) != 4 || rois->dim(0) != numRois || batchTensor->rank() != 1) {
      return nodeError(label_, "rois must be [num_rois, 4] and batch_indices [num_rois], got " +
                                   shapeToString(rois->shape()) + " and " +
                                   shapeToString(batchTensor->shape()));
    }
    const int64_t batch = x->dim(0), channels = x->dim(1), height = x->dim(2), width = x->dim(3);
    for (int64_t b : batchIndices) {
      if (b < 0 || b >= batch) {
        return nodeError(label_, "batch index " + std::to_string(b) + " is out of range for batch size " +
                                     std::to_string(batch));
      }
    }
    Tensor& out = ctx.allocateOutput(0, x->dtype(), {numRois, channels, outH_, outW_});
    if (out.numel() == 0) return Status::ok();
    if (height == 0 || width == 0) return nodeError(label_, "X has an empty spatial dimension");
    KILN_ASSIGN_OR_RETURN(std::vector<double> boxes, readDoubleValues(*rois));
    // Errors from inside name the node already; an unsupported type is the only one dispatch adds.
    Status status = dispatchType<KILN_FLOAT_TYPES>(x->dtype(), [&]<class T>() -> Status {
      const T* src = x->data<T>();
      T* dst = out.data<T>();
      std::vector<SamplePoint> points;
      for (int64_t r = 0; r < numRois; ++r) {
        const double* box = boxes.data() + r * 4;
        if (!std::all_of(box, box + 4, [](double v) { return std::isfinite(v); })) {
          return nodeError(label_, "roi " + std::to_string(r) + " has a non-finite coordinate");
        }
        int64_t gridH = 0, gridW = 0;
        KILN_RETURN_IF_ERROR(samplePoints(r, box, height, width, points, gridH, gridW));
        const double count = static_cast<double>(std::max<int64_t>(gridH * gridW, 1));
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = src + (batchIndices[static_cast<size_t>(r)] * channels + c) * height * width;
          T* y = dst + (r * channels + c) * outH_ * outW_;
          const SamplePoint* point = points.data();
          for (int64_t bin = 0; bin < outH_ * outW_; ++bin) {
            double value = 0;
            for (int64_t s = 0; s < gridH * gridW; ++s, ++point) {
              double terms[4];
              for (size_t k = 0; k < 4; ++k) terms[k] = point->weight[k] * toDouble(plane[point->pos[k]]);
              if (maxMode_) {
                const double v = std::max(std::max(std::max(terms[0], terms[1]), terms[2]), terms[3]);
                value = s == 0 ? v : std::max(value, v);
              } else {
                value += terms[0] + terms[1] + terms[2] + terms[3];
              }
            }
            y[bin] = T(static_cast<ComputeType<T>>(maxMode_ ? value : value / count));
          }
        }
      }
      return Status::ok();
    });
    return status.code() == StatusCode::NOT_IMPLEMENTED ? nodeError(label_, status.message()) : status;
  }

 private:
  // The sampling points of every bin of one roi, bin-major; gridH x gridW points per bin.
  Status samplePoints(int64_t roi, const double* box, int64_t height, int64_t width,
                      std::vector<SamplePoint>& points, int64_t& gridH, int64_t& gridW) const {
    const double offset = halfPixel_ ? 0.5 : 0.0;
    const double scale = static_cast<double>(spatialScale_);
    const double startW = box[0] * scale - offset, startH = box[1] * scale - offset;
    double roiW = box[2] * scale - offset - startW, roiH = box[3] * scale - offset - startH;
    if (!halfPixel_) {
      roiW = std::max(roiW, 1.0);
      roiH = std::max(roiH, 1.0);
    }
    const double binH = roiH / static_cast<double>(outH_), binW = roiW / static_cast<double>(outW_);
    // Adaptive grids grow with the roi; bound them so a huge roi cannot overflow or exhaust memory.
    constexpr double kMaxPoints = 1 << 26;
    const double adaptiveH = std::max(std::ceil(binH), 0.0), adaptiveW = std::max(std::ceil(binW), 0.0);
    const double ratio = static_cast<double>(samplingRatio_);
    const double perBin = samplingRatio_ > 0 ? ratio * ratio : adaptiveH * adaptiveW;
    if (perBin * static_cast<double>(outH_ * outW_) > kMaxPoints) {
      return nodeError(label_, "roi " + std::to_string(roi) + " needs more than 2^26 sampling points; " +
                                   "set sampling_ratio or check its coordinates and spatial_scale");
    }
    gridH = samplingRatio_ > 0 ? samplingRatio_ : static_cast<int64_t>(adaptiveH);
    gridW = samplingRatio_ > 0 ? samplingRatio_ : static_cast<int64_t>(adaptiveW);
    points.clear();
    points.reserve(static_cast<size_t>(outH_ * outW_ * gridH * gridW));
    for (int64_t ph = 0; ph < outH_; ++ph) {
      for (int64_t pw = 0; pw < outW_; ++pw) {
        for (int64_t iy = 0; iy < gridH; ++iy) {
          const double yy = startH + static_cast<double>(ph) * binH +
                            (static_cast<double>(iy) + 0.5) * binH / static_cast<double>(gridH);
          for (int64_t ix = 0; ix < gridW; ++ix) {
            const double xx = startW + static_cast<double>(pw) * binW +
                              (static_cast<double>(ix) + 0.5) * binW / static_cast<double>(gridW);
            points.push_back(bilinearPoint(yy, xx, height, width));
          }
        }
      }
    }
    return Status::ok();
  }

  static SamplePoint bilinearPoint(double y, double x, int64_t height, int64_t width) {
    SamplePoint point;
    if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width))
      return point;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t yLow = static_cast<int64_t>(y), xLow = static_cast<int64_t>(x);
    int64_t yHigh = yLow + 1, xHigh = xLow + 1;
    if (yLow >= height - 1) {
      yHigh = yLow = height - 1;
      y = static_cast<double>(yLow);
    }
    if (xLow >= width - 1) {
      xHigh = xLow = width - 1;
      x = static_cast<double>(xLow);
    }
    const double ly = y - static_cast<double>(yLow), lx = x - static_cast<double>(xLow);
    const double hy = 1.0 - ly, hx = 1.0 - lx;
    point.pos = {yLow * width + xLow, yLow * width + xHigh, yHigh * width + xLow, yHigh * width + xHigh};
    point.weight = {hy * hx, hy * lx, ly * hx, ly * lx};
    return point;
  }

  std::string label_;
  int64_t outH_;
  int64_t outW_;
  int64_t samplingRatio_;
  float spatialScale_;
  bool maxMode_ = false;
  bool halfPixel_ = true;
};

Result<std::unique_ptr<Kernel>> createRoiAlign(const KernelInfo& info) {
  auto kernel = std::make_unique<RoiAlignKernel>(info);
  KILN_RETURN_IF_ERROR(kernel->init(info));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void registerRoiAlignKernels(KernelRegistry& registry) {
  registry.add("RoiAlign", 10, kAnyOpset, createRoiAlign);
}

}  // namespace kiln::cpu
