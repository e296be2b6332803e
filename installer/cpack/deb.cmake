# Settings of CPack's DEB generator only (common metadata: common.cmake).
# Result: packages/kiln_<version>_<arch>.deb, installing under /usr.

set(CPACK_DEBIAN_PACKAGE_NAME "kiln")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)              # kiln_0.1.0_amd64.deb (Debian's naming)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Kiln team")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")

# Depends: computed by dpkg-shlibdeps from what the packaged binaries actually link (protobuf, onnx, Vulkan loader,
# OpenBLAS, Qt for kiln-studio, ...), so the list cannot drift from the build. Needs dpkg-dev and file.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Our executables find libkiln_engine through RPATH $ORIGIN/../lib (installer/CMakeLists.txt), which dpkg-shlibdeps
# resolves inside the package being built, so no CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS is needed.
# A shlibs file + ldconfig trigger for libkiln_engine.so.<soversion>, so packages built against it get a Depends on
# kiln (>= this version) from their own dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

# Not link-time dependencies, so shlibdeps cannot see them: lavapipe gives the Vulkan EP a device on machines
# without a GPU driver, and vulkaninfo helps diagnose device selection.
# graphviz: kiln-studio lays graphs out by running `dot` (a separate program, so its EPL stays out of the binary).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "mesa-vulkan-drivers, graphviz")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "vulkan-tools")
