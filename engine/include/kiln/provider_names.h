// The execution providers' names, in one place: the full names sessions report (PartitionReport, partitions(),
// an EPContext node's `source`) and the short names kiln.execution_providers lists.
#pragma once

namespace kiln {

inline constexpr const char* kCpuExecutionProvider = "CPUExecutionProvider";
inline constexpr const char* kVulkanExecutionProvider = "VulkanExecutionProvider";
// kiln.execution_providers spells them "cpu" and "vulkan" (default "vulkan,cpu": the GPU first, the CPU as fallback).
inline constexpr const char* kCpuProviderShortName = "cpu";
inline constexpr const char* kVulkanProviderShortName = "vulkan";
inline constexpr const char* kDefaultExecutionProviders = "vulkan,cpu";

}  // namespace kiln
