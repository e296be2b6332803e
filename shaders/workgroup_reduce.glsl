// Max and sum of one float per invocation over the whole workgroup (LOCAL_SIZE_X a power of two), through shared
// memory; every invocation must call them (they contain barriers) and gets the result. Used by the attention
// shaders' softmax over a row of scores.
shared float partial[LOCAL_SIZE_X];

float reduceMax(float v) {
  uint tid = gl_LocalInvocationID.x;
  partial[tid] = v;
  barrier();
  for (uint s = LOCAL_SIZE_X / 2u; s > 0u; s >>= 1) {
    if (tid < s) partial[tid] = max(partial[tid], partial[tid + s]);
    barrier();
  }
  float result = partial[0];
  barrier();
  return result;
}

float reduceSum(float v) {
  uint tid = gl_LocalInvocationID.x;
  partial[tid] = v;
  barrier();
  for (uint s = LOCAL_SIZE_X / 2u; s > 0u; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    barrier();
  }
  float result = partial[0];
  barrier();
  return result;
}
