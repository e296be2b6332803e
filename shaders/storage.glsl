// The storage type of float tensors. Include it first (right after #version and the include extension): it may
// enable an extension. Float32 unless the variant defines FP16_STORAGE (float16 tensors: float16 models, and float32
// models compiled with kiln.vulkan.fp16=1), which needs only storageBuffer16BitAccess. Loads widen with float(..)
// or vec4(..), so arithmetic stays float32; stores narrow with SFLOAT(v).
#ifdef FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define SFLOAT float16_t
#define SVEC4 f16vec4
#else
#define SFLOAT float
#define SVEC4 vec4
#endif
