# The version string carried by every result: project version plus the git commit when known.
set(RACKTWIN_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD
                  WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
                  OUTPUT_VARIABLE _rt_commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rt_rc ERROR_QUIET)
  if(_rt_rc EQUAL 0 AND _rt_commit)
    set(RACKTWIN_GIT_COMMIT "${_rt_commit}")
  endif()
endif()
configure_file("${CMAKE_SOURCE_DIR}/cmake/version.hpp.in"
               "${CMAKE_BINARY_DIR}/generated/racktwin/version.hpp" @ONLY)
