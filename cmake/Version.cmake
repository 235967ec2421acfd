# The version string carried by every result: project version plus the git commit, regenerated at
# every build (the header is rewritten only when it changes, so it triggers no needless rebuild).
set(RACKTWIN_VERSION_HEADER "${CMAKE_BINARY_DIR}/generated/racktwin/version.hpp")
add_custom_target(racktwin_version ALL
  COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR="${CMAKE_SOURCE_DIR}" -DOUTPUT="${RACKTWIN_VERSION_HEADER}"
          -DVERSION="${PROJECT_VERSION}" -P "${CMAKE_SOURCE_DIR}/cmake/GenerateVersion.cmake"
  BYPRODUCTS "${RACKTWIN_VERSION_HEADER}"
  COMMENT "racktwin version header")
# Generate once at configure time too, so the header exists before the first build.
execute_process(COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${RACKTWIN_VERSION_HEADER}
                        -DVERSION=${PROJECT_VERSION} -P "${CMAKE_SOURCE_DIR}/cmake/GenerateVersion.cmake")
