#pragma once
// A replica's prefix cache: KV blocks of `block_tokens` prompt tokens, named by the hash of the
// block and everything before it (as in the Mooncake trace format's hash_ids), kept in HBM after
// their request finishes and reused by a later request whose prompt starts with the same blocks.
// Blocks in use by a running request are pinned; unpinned blocks are evicted least recently used
// first when the KV cache needs room. Deterministic: no iteration over hashed containers.

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace racktwin::sim {

class PrefixCache {
 public:
  explicit PrefixCache(int block_tokens) : block_tokens_(block_tokens) {}

  int block_tokens() const { return block_tokens_; }
  // Consecutive blocks of `blocks` present in the cache, from index `from` on (leading blocks by
  // default).
  int match(const std::vector<std::uint64_t>& blocks, int from = 0) const;
  // Pins the first n blocks (all present).
  void pin(const std::vector<std::uint64_t>& blocks, int n);
  // Unpins the first n blocks; a block no request pins becomes the most recently used evictable
  // one.
  void unpin(const std::vector<std::uint64_t>& blocks, int n);
  // Adds blocks[from, to) pinned; returns how many were not present before.
  int insert_pinned(const std::vector<std::uint64_t>& blocks, int from, int to);
  // Evicts up to n unpinned blocks, least recently used first; returns how many it evicted and
  // appends their ids to `evicted` when given.
  int evict(int n, std::vector<std::uint64_t>* evicted = nullptr);
  // Adds unpinned blocks as the most recently used, or refreshes them; then evicts the least
  // recently used unpinned blocks beyond `capacity` blocks. Returns how many were added.
  int store(const std::vector<std::uint64_t>& blocks, int capacity);

  int size() const { return static_cast<int>(entries_.size()); }
  int evictable() const { return static_cast<int>(lru_.size()); }

 private:
  struct Entry {
    int pins = 0;
    std::list<std::uint64_t>::iterator lru;  // valid when pins == 0
  };
  int block_tokens_;
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::list<std::uint64_t> lru_;  // unpinned blocks, least recently used first
};

}  // namespace racktwin::sim
