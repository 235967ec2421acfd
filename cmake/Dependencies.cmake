# Every dependency is a Debian 12 package. A missing one stops the configure step with the name of
# the package to install (scripts/run and scripts/test install them all).

function(racktwin_missing what package)
  message(FATAL_ERROR
    "racktwin: ${what} was not found.\n"
    "Install the Debian package '${package}':  sudo apt-get install ${package}\n"
    "(scripts/run and scripts/test install every missing package for you.)")
endfunction()

find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
  racktwin_missing("pkg-config" "pkg-config")
endif()

find_package(yaml-cpp CONFIG QUIET)
if(NOT yaml-cpp_FOUND)
  racktwin_missing("yaml-cpp" "libyaml-cpp-dev")
endif()

find_package(fmt CONFIG QUIET)
if(NOT fmt_FOUND)
  racktwin_missing("fmt" "libfmt-dev")
endif()

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  racktwin_missing("CLI11" "libcli11-dev")
endif()

find_package(nlohmann_json CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  racktwin_missing("nlohmann-json" "nlohmann-json3-dev")
endif()

find_package(benchmark CONFIG QUIET)
if(NOT benchmark_FOUND)
  racktwin_missing("Google Benchmark" "libbenchmark-dev")
endif()

pkg_check_modules(SimGrid QUIET IMPORTED_TARGET simgrid)
if(NOT SimGrid_FOUND)
  racktwin_missing("SimGrid (3.32)" "libsimgrid-dev")
endif()

find_package(Boost 1.74 CONFIG QUIET COMPONENTS graph)
if(NOT Boost_FOUND)
  racktwin_missing("Boost.Graph" "libboost-graph-dev")
endif()

if(BUILD_TESTING OR NOT DEFINED BUILD_TESTING)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    racktwin_missing("GoogleTest" "libgtest-dev")
  endif()
endif()

# find_package(NAME CONFIG), or stop with the Debian package that provides it.
macro(racktwin_require name what package)
  find_package(${name} CONFIG QUIET)
  if(NOT ${name}_FOUND)
    racktwin_missing("${what}" "${package}")
  endif()
endmacro()

racktwin_require(SQLiteCpp "SQLiteCpp" "libsqlitecpp-dev")
# Qt 6 for the chart library (charts/) and the GUI: Qt Charts needs Qt6OpenGL's CMake files, and
# SVG output needs Qt Svg.
racktwin_require(Qt6Widgets "Qt 6 (Core, Gui, Widgets)" "qt6-base-dev")
racktwin_require(Qt6OpenGL "Qt 6 OpenGL (needed by Qt Charts)" "libqt6opengl6-dev")
racktwin_require(Qt6Charts "Qt 6 Charts" "qt6-charts-dev")
racktwin_require(Qt6Svg "Qt 6 Svg" "qt6-svg-dev")

# Open MPI, for sweeps that outgrow one machine (racktwin-sim-mpi).
find_package(MPI QUIET COMPONENTS CXX)
if(NOT MPI_CXX_FOUND)
  racktwin_missing("Open MPI" "libopenmpi-dev")
endif()
