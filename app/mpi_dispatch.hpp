#pragma once
// The Open MPI backend of a simulation job (racktwin-sim-mpi, started by SimJob under mpirun).
// Rank 0 hands out the job's groups in the order given (costliest first) to every rank, itself
// included; each rank simulates a group in a child racktwin-sim process (SimGrid runs once per
// process, and MPI discourages fork in ranks, so the child starts with posix_spawn) and sends the
// child's lines to rank 0, which writes them on its standard output for the job runner.
//
// Contract: every rank calls mpi_dispatch once, between MPI_Init and MPI_Finalize. The lines rank 0
// emits are the workers' lines, unchanged, a group's lines together. Fails with the reason on rank
// 0 when a worker cannot be started or ends without its group done.

#include <expected>
#include <functional>
#include <string>
#include <vector>

namespace racktwin::app {

std::expected<void, std::string> mpi_dispatch(const std::string& worker, const std::string& job,
                                              const std::vector<std::size_t>& groups,
                                              const std::function<void(const std::string&)>& emit);

}  // namespace racktwin::app
