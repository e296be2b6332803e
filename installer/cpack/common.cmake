# Package metadata shared by every CPack generator (included from installer/CMakeLists.txt before CPack).
# Generator-specific settings live in deb.cmake and archive.cmake, one file per generator.

# Write values into CPackConfig.cmake exactly as set here (the ignore regexes below contain backslashes).
set(CPACK_VERBATIM_VARIABLES ON)

set(CPACK_PACKAGE_NAME "kiln")
set(CPACK_PACKAGE_VENDOR "Kiln team")
set(CPACK_PACKAGE_CONTACT "Kiln team")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "Kiln loads ONNX models, partitions them between a Vulkan execution provider and a CPU fallback, and compiles \
them once into an EPContext model plus a context binary that later loads in milliseconds. This archive holds the \
engine library libkiln_engine with its headers and CMake package (find_package(Kiln) gives Kiln::engine), the kiln \
command-line tool and, where built, the kiln-studio workbench. Licenses: the engine, its headers and the kiln tool are \
Apache-2.0; kiln-studio is GPL-3.0-or-later because it links Qt Charts (GPLv3 in open-source Qt); it runs Graphviz's \
dot (EPL) as a separate program.")

# The install components, one Debian package each (deb.cmake names them). The archive holds them all.
set(CPACK_COMPONENTS_ALL runtime dev cli)
if(KILN_BUILD_STUDIO)
  list(APPEND CPACK_COMPONENTS_ALL studio)
endif()
if(KILN_BUILD_PYTHON)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(kiln_engine_about "Kiln loads ONNX models, partitions them between a Vulkan execution provider and a CPU \
fallback, and compiles them once into an EPContext model plus a context binary that later loads in milliseconds.")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "ONNX compile/infer engine with a Vulkan execution provider (library)
${kiln_engine_about} This package holds the shared library libkiln_engine (Apache-2.0).")
set(CPACK_COMPONENT_DEV_DESCRIPTION "ONNX compile/infer engine with a Vulkan execution provider (development files)
${kiln_engine_about} This package holds the C++20 headers, the libkiln_engine.so link and the CMake package: \
find_package(Kiln) gives Kiln::engine (Apache-2.0).")
set(CPACK_COMPONENT_CLI_DESCRIPTION "ONNX compile/infer engine with a Vulkan execution provider (command-line tool)
${kiln_engine_about} This package holds the kiln tool (run, partition, compile, inspect, check, merge, bench, batch, \
conformance), its device profiles, man pages and bash/zsh completion (Apache-2.0).")
set(CPACK_COMPONENT_STUDIO_DESCRIPTION "ONNX compile/infer engine with a Vulkan execution provider (Qt workbench)
${kiln_engine_about} This package holds kiln-studio, a Qt 6 desktop workbench: graph view, compile panel, binary \
inspector, merge wizard and benchmark charts, with a sample model. kiln-studio is GPL-3.0-or-later because it links \
Qt Charts (GPLv3 in open-source Qt); it runs Graphviz's dot (EPL) as a separate program.")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION "ONNX compile/infer engine with a Vulkan execution provider (Python 3)
${kiln_engine_about} This package holds the kiln Python module: InferenceSession, SessionOptions, RunOptions and \
ModelCompiler with onnxruntime's names, NumPy arrays in and out, and Kiln's inspect, check and merge (Apache-2.0).")
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_PYTHON_DEPENDS runtime)
set(CPACK_COMPONENT_CLI_DEPENDS runtime)
set(CPACK_COMPONENT_STUDIO_DEPENDS runtime)

set(CPACK_PACKAGE_INSTALL_DIRECTORY "kiln")

if(EXISTS "${PROJECT_SOURCE_DIR}/LICENSE")
  set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
endif()
if(EXISTS "${PROJECT_SOURCE_DIR}/README.md")
  set(CPACK_RESOURCE_FILE_README "${PROJECT_SOURCE_DIR}/README.md")
endif()

# `cpack` in the build folder makes both; `cpack -G DEB` or `cpack -G TGZ` makes one.
set(CPACK_GENERATOR "DEB;TGZ")
# Packages go to <build>/packages, not among the build outputs, and each gets a .sha256 beside it.
set(CPACK_OUTPUT_FILE_PREFIX "${CMAKE_BINARY_DIR}/packages")
set(CPACK_PACKAGE_CHECKSUM SHA256)
# Symbols stay in the build tree; packaged binaries are stripped.
set(CPACK_STRIP_FILES ON)
# The archive is one tarball with every component (deb.cmake turns on one package per component for DEB).
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)

# `cpack --config CPackSourceConfig.cmake`: a source tarball of the checkout without build outputs or VCS data.
set(CPACK_SOURCE_GENERATOR "TGZ")
set(CPACK_SOURCE_PACKAGE_FILE_NAME "kiln-${PROJECT_VERSION}-src")
set(CPACK_SOURCE_IGNORE_FILES
    "/\\.git/" "/build/" "/\\.cache/" "/node_modules/" "/__pycache__/" "\\.swp$" "~$"
    "/compile_commands\\.json$")
