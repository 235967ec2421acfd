#include "sim/prefix_cache.hpp"

#include <algorithm>
#include <stdexcept>

namespace racktwin::sim {

int PrefixCache::match(const std::vector<std::uint64_t>& blocks, int from) const {
  int n = 0;
  for (std::size_t i = static_cast<std::size_t>(std::max(0, from)); i < blocks.size(); ++i) {
    if (!entries_.contains(blocks[i])) break;
    ++n;
  }
  return n;
}

int PrefixCache::store(const std::vector<std::uint64_t>& blocks, int capacity) {
  int added = 0;
  for (std::uint64_t b : blocks) {
    auto [it, inserted] = entries_.try_emplace(b);
    added += inserted ? 1 : 0;
    if (it->second.pins > 0) continue;
    if (!inserted) lru_.erase(it->second.lru);
    it->second.lru = lru_.insert(lru_.end(), b);
  }
  if (size() > capacity) evict(size() - capacity);
  return added;
}

void PrefixCache::pin(const std::vector<std::uint64_t>& blocks, int n) {
  for (int i = 0; i < n; ++i) {
    auto it = entries_.find(blocks[static_cast<std::size_t>(i)]);
    if (it == entries_.end())
      throw std::logic_error("prefix cache: pinning a block that is not cached");
    if (it->second.pins++ == 0) lru_.erase(it->second.lru);
  }
}

void PrefixCache::unpin(const std::vector<std::uint64_t>& blocks, int n) {
  for (int i = 0; i < n; ++i) {
    auto it = entries_.find(blocks[static_cast<std::size_t>(i)]);
    if (it == entries_.end() || it->second.pins == 0)
      throw std::logic_error("prefix cache: unpinning a free block");
    if (--it->second.pins == 0) it->second.lru = lru_.insert(lru_.end(), it->first);
  }
}

int PrefixCache::insert_pinned(const std::vector<std::uint64_t>& blocks, int from, int to) {
  int added = 0;
  for (int i = from; i < to; ++i) {
    const std::uint64_t b = blocks[static_cast<std::size_t>(i)];
    auto [it, inserted] = entries_.try_emplace(b);
    if (inserted) {
      ++added;
    } else if (it->second.pins == 0) {
      lru_.erase(it->second.lru);
    }
    it->second.pins += 1;
  }
  return added;
}

int PrefixCache::evict(int n, std::vector<std::uint64_t>* evicted) {
  int done = 0;
  while (done < n && !lru_.empty()) {
    if (evicted != nullptr) evicted->push_back(lru_.front());
    entries_.erase(lru_.front());
    lru_.pop_front();
    ++done;
  }
  return done;
}

}  // namespace racktwin::sim
