// The GLSL text of shaders/, embedded at build time (engine/cmake/embed_shaders.cmake generates the table).
#pragma once

#include <span>

namespace kiln::vk {

struct EmbeddedShader {
  const char* name;    // file stem for *.comp shaders ("binary"); "<stem>.glsl" for shared include text
  const char* source;
};

std::span<const EmbeddedShader> embeddedShaders();

}  // namespace kiln::vk
