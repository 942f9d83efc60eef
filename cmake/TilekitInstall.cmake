# `cmake --install`: headers, libtilekit, the program, the backend plugins, libtilekit_blas, the
# CMake package (tilekitConfig.cmake, tilekitConfigVersion.cmake, tilekitTargets.cmake with
# tilekit::tilekit and tilekit::blas),
# tilekit.pc, in the GNUInstallDirs places; and `cpack -G DEB` packs the same files.
include(CMakePackageConfigHelpers)
set(TILEKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilekit)

install(TARGETS tilekit EXPORT tilekitTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The whole public tree (include/tilekit/**), then what the build generated into it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tilekit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.cuh" PATTERN "*.inc")
install(FILES ${PROJECT_BINARY_DIR}/include/tilekit/version.hpp ${PROJECT_BINARY_DIR}/include/tilekit/config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilekit)
foreach(p IN LISTS TILEKIT_PLUGINS)
  install(TARGETS tilekit_backend_${p} LIBRARY DESTINATION ${TILEKIT_PLUGIN_INSTALL_DIR})
endforeach()
if(TILEKIT_BUILD_CLI)
  if(BUILD_SHARED_LIBS)  # the installed program finds its libtilekit.so wherever the prefix is
    file(RELATIVE_PATH _tk_rel ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
    set_target_properties(tilekit_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${_tk_rel}")
  endif()
  install(TARGETS tilekit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

if(TARGET tilekit_blas)
  # libtilekit_blas (tilekit::blas in the package), and the file name Debian's libblas.so.3
  # alternative points at (docs/blas.md): <libdir>/tilekit-blas/libblas.so.3 -> the library.
  install(TARGETS tilekit_blas EXPORT tilekitTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development)
  install(FILES ${PROJECT_BINARY_DIR}/tilekit-blas/libblas.so.3 DESTINATION ${CMAKE_INSTALL_LIBDIR}/tilekit-blas)
endif()

install(EXPORT tilekitTargets NAMESPACE tilekit:: DESTINATION ${TILEKIT_CMAKE_DIR})

# What tilekitConfig.cmake must find again: a static libtilekit's private dependencies.
get_target_property(_tk_type tilekit TYPE)
set(TILEKIT_CONFIG_DEPENDENCIES "")
set(TILEKIT_PC_LIBS "-ltilekit")
set(TILEKIT_PC_LIBS_PRIVATE "")
get_property(_tk_pc GLOBAL PROPERTY TILEKIT_EXPORT_PKGCONFIG)
if(TILEKIT_PLUGINS)
  list(APPEND _tk_pc ${CMAKE_DL_LIBS})
endif()
list(TRANSFORM _tk_pc REPLACE "^([a-zA-Z0-9_]+)$" "-l\\1")
string(REPLACE ";" " " _tk_pc "${_tk_pc}")
if(_tk_type STREQUAL "STATIC_LIBRARY")
  string(APPEND TILEKIT_CONFIG_DEPENDENCIES "find_dependency(fmt)\n")
  get_property(_tk_finds GLOBAL PROPERTY TILEKIT_EXPORT_FIND)
  list(REMOVE_DUPLICATES _tk_finds)
  foreach(f IN LISTS _tk_finds)
    string(APPEND TILEKIT_CONFIG_DEPENDENCIES "find_dependency(${f})\n")
  endforeach()
  # A static library has no shared form to hide its dependencies behind: plain
  # `pkg-config --libs` must give everything the link needs.
  set(TILEKIT_PC_REQUIRES "fmt")
  string(APPEND TILEKIT_PC_LIBS " ${_tk_pc}")
  if(TILEKIT_PLUGINS)
    string(APPEND TILEKIT_PC_LIBS " -Wl,--export-dynamic")
  endif()
else()
  set(TILEKIT_PC_REQUIRES "")
  set(TILEKIT_PC_REQUIRES_PRIVATE "fmt")
  set(TILEKIT_PC_LIBS_PRIVATE "${_tk_pc}")
endif()
string(REPLACE ";" " " TILEKIT_BACKENDS_LIST "${TILEKIT_BACKENDS}")
get_property(TILEKIT_CONFIG_CUDA_ARCHITECTURES GLOBAL PROPERTY TILEKIT_CUDA_ARCHITECTURES)
get_property(TILEKIT_CONFIG_CUDA_FLAGS GLOBAL PROPERTY TILEKIT_CUDA_FLAGS)
set(TILEKIT_CONFIG_HIP_ARCHITECTURES "")
if("hip" IN_LIST TILEKIT_BACKENDS)
  set(TILEKIT_CONFIG_HIP_ARCHITECTURES "${TILEKIT_HIP_ARCHITECTURES}")
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tilekitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tilekitConfig.cmake INSTALL_DESTINATION ${TILEKIT_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR TILEKIT_PLUGIN_INSTALL_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tilekitConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tilekitConfig.cmake ${PROJECT_BINARY_DIR}/tilekitConfigVersion.cmake
        DESTINATION ${TILEKIT_CMAKE_DIR})

# prefix relative to the .pc file, so that `cmake --install --prefix P` and packages relocate.
string(REGEX REPLACE "[^/]+" ".." TILEKIT_PC_PREFIX "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tilekit.pc.in ${PROJECT_BINARY_DIR}/tilekit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tilekit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB (run in the build directory): a Debian package of the same install.
if(PROJECT_IS_TOP_LEVEL)
  set(CPACK_PACKAGE_NAME tilekit)
  set(CPACK_PACKAGE_VENDOR "tilekit")
  set(CPACK_PACKAGE_CONTACT "tilekit maintainers <tilekit@localhost>")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
  # Where the build was configured to live (CMAKE_INSTALL_PREFIX, /usr/local by default;
  # -DCMAKE_INSTALL_PREFIX=/usr for a system package): the library looks for its plugins there.
  set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
  set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  # Depends: the Debian packages the built-in backends link (a static libtilekit needs their
  # development files to link a program). Not the plugins' GPU runtimes: a plugin whose runtime
  # is missing is listed as unavailable, which is the point of plugins (dpkg-shlibdeps would make
  # libamdhip64 a dependency, so it is not used).
  get_property(_tk_deps GLOBAL PROPERTY TILEKIT_EXPORT_DEB)
  list(PREPEND _tk_deps libfmt-dev)
  if(TARGET tilekit_blas)
    list(APPEND _tk_deps "libopenblas0 | libblas3")  # where libtilekit_blas forwards the other routines
  endif()
  list(REMOVE_DUPLICATES _tk_deps)
  list(JOIN _tk_deps ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
  set(CPACK_GENERATOR DEB)
  include(CPack)
endif()
