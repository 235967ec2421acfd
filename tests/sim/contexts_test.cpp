// The actors' stacks are known to AddressSanitizer (sim/contexts.cpp): in a sanitized build,
// exceptions thrown and caught on actor stacks, and daemon actors killed at the end of a
// simulation, leave it no stack it cannot place. Unannounced, each prints "ASan is ignoring
// requested __asan_handle_no_return ... False positive error reports may follow", and the stale
// poison of the frames an exception unwound can stop the program on a later, correct access.

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>

#include "sim/contexts.hpp"

namespace {

namespace sg4 = simgrid::s4u;

// Frames with arrays (their redzones poisoned) down to a throw.
[[gnu::noinline]] int deep(int n) {
  volatile char buffer[256];
  buffer[n % 256] = static_cast<char>(n);
  if (n == 0) throw std::runtime_error("bottom");
  return deep(n - 1) + buffer[(n * 7) % 256];
}

// Reuses the stack the exception unwound, with another layout.
[[gnu::noinline]] long wide(int n) {
  volatile long words[1024];
  for (int i = 0; i < 1024; ++i) words[i] = static_cast<long>(i) * n;
  long sum = 0;
  for (int i = 0; i < 1024; ++i) sum += words[i];
  return sum;
}

void simulate_throwing_actors() {
  static char arg0[] = "contexts_test";
  static char arg1[] = "--log=root.thresh:critical";
  static std::string factory = racktwin::sim::detail::context_factory_option();
  char* argv[] = {arg0, arg1, factory.data(), nullptr};
  int argc = 3;
  sg4::Engine engine(&argc, argv);
  auto* zone = sg4::create_full_zone("zone");
  auto* host = zone->create_host("host", 1e9);
  zone->seal();
  for (int a = 0; a < 8; ++a)
    sg4::Actor::create("worker", host, [a] {
      for (int i = 0; i < 40; ++i) {
        try {
          deep(16 + a);
        } catch (const std::runtime_error&) {
        }
        wide(i);
        sg4::this_actor::sleep_for(0.001 * (a + 1));
      }
    });
  // Killed when the workers end: SimGrid unwinds its stack with an exception.
  sg4::Actor::create("daemon", host, [] {
    for (;;) {
      wide(1);
      sg4::this_actor::sleep_for(0.01);
    }
  })->daemonize();
  engine.run();
}

struct Child {
  int status = 0;
  std::string messages;  // its standard error
};

// The simulation in a child process (a process has one SimGrid engine), its messages read back.
Child simulate_in_a_child() {
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) return {-1, "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_ends[1], 2);
    ::close(pipe_ends[0]);
    ::close(pipe_ends[1]);
    simulate_throwing_actors();
    std::_Exit(0);
  }
  ::close(pipe_ends[1]);
  Child c;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;)
    c.messages.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_ends[0]);
  if (pid < 0 || ::waitpid(pid, &c.status, 0) != pid) c.status = -1;
  return c;
}

TEST(SimgridContexts, ActorStacks_AreKnownToTheSanitizer) {
#ifndef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "checks a sanitized build (-DRACKTWIN_SANITIZE=ON)";
#endif
  const Child c = simulate_in_a_child();
  EXPECT_TRUE(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) << c.messages;
  EXPECT_EQ(c.messages.find("ASan is ignoring"), std::string::npos) << c.messages;
}

}  // namespace
