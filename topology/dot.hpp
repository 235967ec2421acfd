#pragma once
// GraphViz export of a topology.

#include <string>

#include "topology/topology.hpp"

namespace racktwin::topology {

// The topology as a GraphViz digraph: one node per part, its id the part name, with attributes
// `kind` and `shape`; one edge per support edge (from the part depended on) and one per network
// link (dir=none), with attributes `kind` and, for links, `bandwidth` per direction in bytes/s.
// Renders with `dot`; reads back with boost::read_graphviz.
std::string to_dot(const Topology& t);

}  // namespace racktwin::topology
