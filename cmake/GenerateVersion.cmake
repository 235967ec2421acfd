# cmake -DSOURCE_DIR=... -DOUTPUT=... -DVERSION=... -P GenerateVersion.cmake
set(RACKTWIN_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND commit)
    set(RACKTWIN_GIT_COMMIT "${commit}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" diff --quiet HEAD -- WORKING_DIRECTORY "${SOURCE_DIR}"
                    RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      set(RACKTWIN_GIT_COMMIT "${commit}-modified")
    endif()
  endif()
endif()
set(PROJECT_VERSION "${VERSION}")
set(CMAKE_SOURCE_DIR "${SOURCE_DIR}")
configure_file("${SOURCE_DIR}/cmake/version.hpp.in" "${OUTPUT}" @ONLY)
