// The rendezvous hello as a fuzz target: the bytes a stranger can send rank 0 (a TCP line: a
// hello, read with and without a token) or leave where ranks meet (a FILE's head, FILE.rank<N>),
// and what a fake rank 0 can send a rank (a challenge, a reply). Each reader must answer with a
// refusal and its reason, never throw: rank 0 turns a bad peer away and carries on.
#include "fuzz_targets.h"

#include "core/rendezvous_wire.h"

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpucheck::fuzz {

void rendezvous(const std::uint8_t* data, std::size_t size) {
  namespace wire = rendezvous_wire;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::string kChallenge = "0123456789abcdef0123456789abcdef";
  static const std::string kToken = "fuzz-secret-0123456789";
  for (const wire::Run& run : {wire::Run{"", 2, ""}, wire::Run{"77.0", 4, kToken}}) {
    const wire::HelloCheck c = wire::check_hello(text, run, kChallenge);
    if (c.hello && (c.hello->rank < 1 || c.hello->rank >= run.world_size))
      throw std::logic_error("a hello of a rank outside the world was accepted");
    if (!c.hello && c.refusal.empty()) throw std::logic_error("a refusal without a reason");
    (void)wire::refusal_line(run.token, kChallenge, c.nonce, c.refusal);
    std::string why;
    if (const auto head = wire::read_head(text, run.token, &why))
      (void)wire::text_field(head->members, "1", 64);
    else if (why.empty())
      throw std::logic_error("a head refused without a reason");
    (void)wire::read_reply(text, run.token, kChallenge, kChallenge);
  }
  (void)wire::read_challenge(text);
}

}  // namespace gpucheck::fuzz
