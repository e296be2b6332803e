# Settings of CPack's DEB generator only (common metadata: common.cmake).
# Result: one package per install component, split as Debian splits a library and its programs, installing under /usr:
#   libkiln-engine0_<ver>_<arch>.deb     component runtime: libkiln_engine.so.0 (+ shlibs file, ldconfig trigger)
#   libkiln-engine-dev_<ver>_<arch>.deb  component dev: headers, libkiln_engine.so link, CMake package
#   kiln_<ver>_<arch>.deb                component cli: the kiln tool, its man pages and shell completion
#   kiln-studio_<ver>_<arch>.deb         component studio: the Qt workbench (GPL-3.0-or-later), when it is built, with
#                                        its menu entry, icon, AppStream metainfo and .onnx MIME type
#   python3-kiln_<ver>_<arch>.deb        component python: the kiln Python module, when it is built
# A headless server installs kiln + libkiln-engine0 and gets no Qt: only kiln-studio links Qt.

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)              # <package>_<version>_<arch>.deb (Debian's naming)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Kiln team")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "libkiln-engine${PROJECT_VERSION_MAJOR}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION "libs")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME "libkiln-engine-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION "libdevel")
set(CPACK_DEBIAN_CLI_PACKAGE_NAME "kiln")
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_STUDIO_PACKAGE_NAME "kiln-studio")
set(CPACK_DEBIAN_STUDIO_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME "python3-kiln")
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION "python")

# Depends between our packages: CPACK_COMPONENT_<C>_DEPENDS (common.cmake) becomes "<package> (= <version>)".
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

# Depends on other packages: computed by dpkg-shlibdeps from what each package's binaries actually link (protobuf,
# onnx, Vulkan loader, OpenBLAS and oneDNN for the library; Qt for kiln-studio only), so the lists cannot drift from the build.
# Needs dpkg-dev and file.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# kiln and kiln-studio find libkiln_engine through RPATH $ORIGIN/../lib, which is in another package: dpkg-shlibdeps
# finds it in the build tree instead (and leaves it out, as it belongs to no installed package; the Depends on
# libkiln-engine0 comes from the component dependency above).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${PROJECT_BINARY_DIR}/engine")
# A shlibs file + ldconfig trigger for libkiln_engine.so.<soversion>, so packages built against it get a Depends on
# libkiln-engine0 (>= this version) from their own dpkg-shlibdeps.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

# Not link-time dependencies, so shlibdeps cannot see them: lavapipe gives the Vulkan EP a device on machines
# without a GPU driver, and vulkaninfo helps diagnose device selection.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "mesa-vulkan-drivers")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "vulkan-tools")
# The bench panel runs the kiln program; graphs are laid out by Graphviz's `dot` (a separate program, so its EPL
# stays out of the binary).
set(CPACK_DEBIAN_STUDIO_PACKAGE_RECOMMENDS "kiln (= ${PROJECT_VERSION}), graphviz")
# Qt's xcb and wayland platform plugins, without which kiln-studio cannot open a window on a desktop: libqt6gui6 only
# recommends them (and brings the offscreen one itself). Added to what dpkg-shlibdeps finds.
set(CPACK_DEBIAN_STUDIO_PACKAGE_DEPENDS "qt6-qpa-plugins")
# The extension is built for one Python minor version (its file name says cpython-3XX) and imports numpy.
if(KILN_BUILD_PYTHON)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "${KILN_PYTHON_DEB_DEPENDS}")  # app/python/CMakeLists.txt
  # Removes the __pycache__ folders Python writes at the first import, so apt-get remove leaves nothing behind.
  set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA "${CMAKE_CURRENT_LIST_DIR}/python3-kiln/prerm")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_STRICT_PERMISSION ON)
endif()
# kiln bench --compare-onnxruntime runs node with onnxruntime-node (fetched by the user, not packaged in Debian).
set(CPACK_DEBIAN_CLI_PACKAGE_SUGGESTS "nodejs")
