#include "app/json.hpp"

namespace racktwin::app {

Json diagnostics_json(const Diagnostics& d) {
  Json arr = Json::array();
  for (const auto& x : d)
    arr.push_back({{"file", x.where.file},
                   {"line", x.where.line},
                   {"column", x.where.column},
                   {"path", x.path},
                   {"message", x.message},
                   {"hint", x.hint}});
  return arr;
}

}  // namespace racktwin::app
