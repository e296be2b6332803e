// Runs independent work items on up to hardware_concurrency threads (the calling thread among them) and reports
// progress on the calling thread as items finish: glslang compiles and pipeline creation in the Vulkan EP.
#pragma once

#include <cstddef>
#include <functional>

namespace kiln {

// Calls work(i) once for every i in [0, count), in no particular order, concurrently. progress(done) is called on
// the calling thread, between items, each time the number of finished items grows (ending with done == count).
// Returns when every item has finished; work must not throw.
void runParallel(size_t count, const std::function<void(size_t)>& work, const std::function<void(size_t)>& progress);

}  // namespace kiln
