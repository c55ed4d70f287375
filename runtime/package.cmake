# SPDX-License-Identifier: MIT
# Installing libtpurt (`make install PREFIX=...`, i.e. cmake --install build/host --prefix ...):
#   lib/libtpurt.so.0.1.0 (soname libtpurt.so.0), lib/libtpurt.so, lib/libtpurt.a
#   include/tpurt/*.hpp, types/, card/, ops/, tpurt.h   the stable API (tpurt.hpp includes it)
#   include/tpurt/codegen/, golden/, testing/   compilers, golden models, test matrices
#   include/tpu_hw.h               the card's hardware contract, which the API's headers use
#   include/drm/tpu_accel.h        the driver's uapi, for raw ioctls next to the runtime
#   lib/pkgconfig/tpurt.pc         pkg-config tpurt (add --static for libtpurt.a)
#   lib/cmake/tpurt/               find_package(tpurt): tpurt::tpurt (shared), tpurt::tpurt_static
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tpurt tpurt_shared EXPORT tpurtTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/tpurt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/tpu_hw.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/uapi/drm/tpu_accel.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/drm)

# Imported as tpurt::tpurt (the shared library) and tpurt::tpurt_static.
set_target_properties(tpurt_shared PROPERTIES EXPORT_NAME tpurt)
set_target_properties(tpurt PROPERTIES EXPORT_NAME tpurt_static)
install(EXPORT tpurtTargets NAMESPACE tpurt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpurt)
configure_package_config_file(package/tpurtConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/tpurtConfig.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpurt)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tpurtConfigVersion.cmake
    VERSION ${TPURT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tpurtConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tpurtConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpurt)

# pkg-config: paths relative to the file, so the prefix can move (cmake --install --prefix), from
# whatever depth the library directory has (lib/pkgconfig, Debian's lib/x86_64-linux-gnu/pkgconfig);
# a distribution's package, whose prefix is fixed, sets it (TPURT_PC_PREFIX=/usr in debian/rules),
# so that pkg-config prints no -L for the system's library directory.
set(TPURT_PC_PREFIX "" CACHE STRING "prefix written into tpurt.pc (empty: relative to the file)")
if(TPURT_PC_PREFIX)
    set(TPURT_PC_PREFIX_VALUE ${TPURT_PC_PREFIX})
else()
    file(RELATIVE_PATH TPURT_PC_UP /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
    string(REGEX REPLACE "/$" "" TPURT_PC_UP ${TPURT_PC_UP})
    set(TPURT_PC_PREFIX_VALUE "\${pcfiledir}/${TPURT_PC_UP}")
endif()
configure_file(package/tpurt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tpurt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tpurt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
