// kiln bench --decode N --prompt P MODEL: greedy generation with a decoder that has onnxruntime-genai's interface
// (input_ids, attention_mask, past_key_values.{i}.key/value -> logits, present.{i}.key/value), in this process
// through the public Session API, optionally beside onnxruntime-node running the same loop (ort_decode.mjs). By
// default each step runs through an IoBinding: present.* bound to the device and fed back as past_key_values.*,
// logits read back; the bytes the session copied between host and device per step are measured (Session::transfers).
#pragma once

#include <string>
#include <vector>

#include "cli_output.h"

namespace kiln::cli {

struct DecodeBenchArgs {
  std::string model;
  int steps = 0;   // decode steps after the prefill (--decode)
  int prompt = 16;  // prompt tokens of the prefill (--prompt)
  std::string ep;
  std::vector<std::string> configs;
  std::string device;
  bool compareOnnxRuntime = false;
  std::string onnxRuntimeDir;
  std::string saveLogits;  // folder for logits_<k>.npy (k 0: the prefill), empty: none
  bool noIoBinding = false;  // Session::run with host feeds instead of an IoBinding keeping present.* on the device
  double timeoutSeconds = 600;
  CommonFlags flags;
};

// Runs the decode bench and prints its report (JSON with flags.json, else a table); returns the exit code:
// 2 for usage errors (no KV-cache inputs, --decode 0), 1 when a run fails.
int runDecodeBench(const DecodeBenchArgs& args);

}  // namespace kiln::cli
