# Writes build_info.hpp (the commit tilekit was built from) at every build, touching the file
# only when the commit changes so nothing rebuilds needlessly. Run by src/cli/CMakeLists.txt.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(content "#pragma once\nnamespace tilekit::cli {\ninline constexpr const char* kBuildCommit = \"${commit}\";\ninline constexpr const char* kBuildType = \"${BUILD_TYPE}\";\ninline constexpr const char* kCompiler = \"${COMPILER}\";\n}\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
