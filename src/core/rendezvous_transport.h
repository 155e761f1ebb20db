// Inside core/rendezvous: the two ways the ranks meet (rendezvous_file.cpp, rendezvous_tcp.cpp)
// and what they share. Not for other folders: they call rendezvous() in core/rendezvous.h.
#pragma once

#include "core/rendezvous.h"
#include "core/rendezvous_wire.h"

#include <netdb.h>

#include <chrono>
#include <memory>
#include <string>

namespace gpucheck::rendezvous_detail {

using Clock = std::chrono::steady_clock;
inline constexpr auto kPoll = std::chrono::milliseconds(50);

// Every rank must give the same --world-size and --rendezvous, and start within the timeout.
inline constexpr const char* kHint =
    "every rank needs the same --rendezvous, --world-size and GPUCHECK_RENDEZVOUS_TOKEN and must "
    "start within --rendezvous-timeout of the others";

Clock::time_point deadline_after(double seconds);
std::string host_name();
double unix_now();
std::string ranks_text(const std::vector<int>& ranks);
// "--rendezvous WHERE: rank R of N waited T s"
std::string waited(const RendezvousRequest& q);
rendezvous_wire::Run run_of(const RendezvousRequest& q);

using AddressList = std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)>;
// The place's host and port as addresses; UsageError naming --rendezvous when it does not resolve.
AddressList resolve(const RendezvousPlace& place);
// Every address the place's host resolves to is this host's own (127.0.0.0/8, ::1).
bool loopback_only(const RendezvousPlace& place);

RendezvousResult file_rank0(const RendezvousRequest& q, const RendezvousAnswer& answer);
RendezvousResult file_rank(const RendezvousRequest& q);
// Removes FILE when it is the head this process wrote.
void retire_file(const std::string& file);
RendezvousResult tcp_rank0(const RendezvousRequest& q, const RendezvousAnswer& answer);
RendezvousResult tcp_rank(const RendezvousRequest& q);

}  // namespace gpucheck::rendezvous_detail
