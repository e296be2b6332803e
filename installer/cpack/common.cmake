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
them once into an EPContext model plus a context binary that later loads in milliseconds. This package holds the \
engine library libkiln_engine with its headers and CMake package (find_package(Kiln) gives Kiln::engine), the kiln \
command-line tool and, where built, the kiln-studio workbench. Licenses: the engine, its headers and the kiln tool are \
Apache-2.0; kiln-studio is GPL-3.0-or-later because it links Qt Charts (GPLv3 in open-source Qt); it runs Graphviz's \
dot (EPL) as a separate program.")
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
# One package with everything (engine, headers, CMake files, tools): the components (runtime, dev) only select what
# `cmake --install --component` copies.
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)

# `cpack --config CPackSourceConfig.cmake`: a source tarball of the checkout without build outputs or VCS data.
set(CPACK_SOURCE_GENERATOR "TGZ")
set(CPACK_SOURCE_PACKAGE_FILE_NAME "kiln-${PROJECT_VERSION}-src")
set(CPACK_SOURCE_IGNORE_FILES
    "/\\.git/" "/build/" "/\\.cache/" "/node_modules/" "/__pycache__/" "\\.swp$" "~$"
    "/compile_commands\\.json$")
