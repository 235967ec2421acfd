// The SimGrid context factory, and under AddressSanitizer the stack switches told to it.
//
// SimGrid runs every actor on its own stack and switches between them. AddressSanitizer cannot
// tell such a switch from a stack overflow unless it is told of it ("ASan is ignoring requested
// __asan_handle_no_return ... False positive error reports may follow"), and Debian's SimGrid is
// not built to tell it. Thread contexts need no telling, but every switch is then a hand-off
// between kernel threads, and the simulations ran several times slower under the sanitizers.
//
// So a sanitized build uses the same factory as any other, SimGrid's raw stack switching, and
// this file defines the two functions that factory calls, raw_makecontext and raw_swapcontext:
// the program's own definitions come before libsimgrid's in symbol lookup (libsimgrid calls them
// through its procedure linkage table). Each announces the switch with
// __sanitizer_start_switch_fiber and __sanitizer_finish_switch_fiber around a call to
// libsimgrid's own function. An actor's stack is the block raw_makecontext prepared, found from
// the stack pointer the switch goes to; any other stack pointer is on the main stack, whose
// bounds the sanitizer reports when it is first left. raw_makecontext starts each actor through a
// trampoline that finishes the first switch into it.
//
// The signatures are SimGrid 3.32's (src/kernel/context/ContextRaw.cpp): raw_makecontext(stack,
// size, entry, argument) returns the new context's stack pointer, raw_swapcontext(&old, new)
// saves the current one in old. Only SimGrid calls them, on the simulation's one thread.

#include "sim/contexts.hpp"

#ifdef __SANITIZE_ADDRESS__

#include <dlfcn.h>
#include <sanitizer/common_interface_defs.h>

#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>

namespace {

using Entry = void (*)(void*);

struct Fiber {
  std::size_t size = 0;
  Entry entry = nullptr;
  void* argument = nullptr;
};

struct Stack {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

struct Fibers {
  std::map<std::uintptr_t, Fiber> actors;  // by the bottom of the actor's stack
  Stack main;                              // learned when it is first left
};

Fibers& fibers() {
  thread_local Fibers f;
  return f;
}

// libsimgrid's definition, which the program's definition below hides from ordinary lookup.
template <class Function>
Function simgrid_symbol(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) std::abort();  // no SimGrid raw contexts: nothing can switch stacks
  return reinterpret_cast<Function>(symbol);
}

// The actor stack holding the address, or the end of the map.
std::map<std::uintptr_t, Fiber>::iterator actor_at(std::uintptr_t address) {
  auto& actors = fibers().actors;
  auto it = actors.upper_bound(address);
  if (it == actors.begin()) return actors.end();
  --it;
  return address < it->first + it->second.size ? it : actors.end();
}

Stack stack_at(const void* stack_pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(stack_pointer);
  const auto it = actor_at(address);
  if (it == fibers().actors.end()) return fibers().main;
  return {reinterpret_cast<const void*>(it->first), it->second.size};
}

// The first thing code does on the stack it switched to.
void arrived(void* fake_stack) {
  Stack from;
  __sanitizer_finish_switch_fiber(fake_stack, &from.bottom, &from.size);
  if (actor_at(reinterpret_cast<std::uintptr_t>(from.bottom)) == fibers().actors.end())
    fibers().main = from;
}

void trampoline(void* stack) {
  arrived(nullptr);
  const Fiber f = fibers().actors.at(reinterpret_cast<std::uintptr_t>(stack));
  f.entry(f.argument);
}

}  // namespace

extern "C" void* raw_makecontext(void* stack, int size, Entry entry, void* argument) {
  auto& actors = fibers().actors;
  const auto bottom = reinterpret_cast<std::uintptr_t>(stack);
  const auto bytes = static_cast<std::size_t>(size);
  // A stack freed with its actor may have held part of this one.
  auto first = actors.lower_bound(bottom);
  if (first != actors.begin() && std::prev(first)->first + std::prev(first)->second.size > bottom)
    --first;
  actors.erase(first, actors.lower_bound(bottom + bytes));
  actors[bottom] = Fiber{bytes, entry, argument};
  using Make = void* (*)(void*, int, Entry, void*);
  static const Make make = simgrid_symbol<Make>("raw_makecontext");
  return make(stack, size, &trampoline, stack);
}

extern "C" void raw_swapcontext(void** old, void* next) {
  const Stack to = stack_at(next);
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, to.bottom, to.size);
  using Swap = void (*)(void**, void*);
  static const Swap swap = simgrid_symbol<Swap>("raw_swapcontext");
  swap(old, next);
  arrived(fake_stack);
}

#endif

namespace racktwin::sim::detail {
const char* context_factory_option() {
  return "--cfg=contexts/factory:raw";
}
}  // namespace racktwin::sim::detail
