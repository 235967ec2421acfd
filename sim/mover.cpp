// The mover actor: KV transfers for one replica, taken from a mailbox. Prompt KV into a decode
// replica from a prefill replica (the kv-receiver on the decode replica's host), or blocks between
// a replica and its host DRAM pool (the offload mover on the pool's host). Each is a SimGrid
// communication over the generated platform, so concurrent transfers share links.

#include "sim/point_state.hpp"

namespace racktwin::sim::detail {
namespace {

// A transfer that arrived for a request: it joins replica k's inbox, or goes back to the frontend
// to restart elsewhere when the replica failed while the transfer ran.
void deliver(Point* p, int k, Request* r) {
  if (!p->up[static_cast<std::size_t>(k)]) {
    r->failed = true;
    r->first_token = -1;
    p->done.push_back(r);
    p->done_cv->notify_one();
    return;
  }
  r->ready = sg4::Engine::get_clock();
  p->inbox[static_cast<std::size_t>(k)].push_back(r);
  p->wake[static_cast<std::size_t>(k)]->notify_one();
}

}  // namespace

// Transfers run side by side: comms[0] receives the next transfer from `mb`, comms[i > 0] moves
// moving[i]. The requests waiting for one join the replica's inbox when it has arrived.
void mover(Point* p, int k, sg4::Mailbox* mb) {
  Point::Transfer* incoming = nullptr;
  std::vector<sg4::CommPtr> comms{mb->get_async<Point::Transfer>(&incoming)};
  std::vector<Point::Transfer*> moving{nullptr};
  while (true) {
    const auto i = static_cast<std::size_t>(sg4::Comm::wait_any(comms));
    if (i == 0) {
      if (incoming->stop) {
        // The run is over; writes to host DRAM may still be on their way.
        for (std::size_t c = 1; c < comms.size(); ++c) comms[c]->wait();
        break;
      }
      comms.push_back(sg4::Comm::sendto_async(incoming->from, incoming->to,
                                              static_cast<std::uint64_t>(incoming->bytes)));
      moving.push_back(incoming);
      comms[0] = mb->get_async<Point::Transfer>(&incoming);
      continue;
    }
    const Point::Transfer* done = moving[i];
    comms.erase(comms.begin() + static_cast<std::ptrdiff_t>(i));
    moving.erase(moving.begin() + static_cast<std::ptrdiff_t>(i));
    for (Request* r : done->requests) deliver(p, k, r);  // none: a write to host DRAM
  }
}

}  // namespace racktwin::sim::detail
