# Settings of CPack's archive generators (TGZ) only (common metadata: common.cmake).
# Result: packages/kiln-<version>-Linux-<arch>.tar.gz with one top folder holding bin/ lib/ include/ share/.
# The tree is relocatable: executables find libkiln_engine via RPATH $ORIGIN/../lib, and KilnConfig.cmake locates
# itself, so `CMAKE_PREFIX_PATH=<unpacked folder>` is enough for find_package(Kiln).

# CPACK_PACKAGE_FILE_NAME names only the archive: the DEB generator uses CPACK_DEBIAN_FILE_NAME (deb.cmake), and
# CMake 3.25 ignores CPACK_ARCHIVE_FILE_NAME for a package without components.
set(CPACK_PACKAGE_FILE_NAME "kiln-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
