// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for proving that the ranks of a
// multi-process run share a secret without sending it: small enough to keep in core rather
// than take on a crypto library for one use.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpucheck {

using Sha256Digest = std::array<std::uint8_t, 32>;

Sha256Digest sha256(std::string_view data);
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);

// Lower-case hex of the digest (64 characters).
std::string digest_hex(const Sha256Digest& digest);

// a == b in a time that depends on their lengths only, not on where they first differ: a
// proof compared byte by byte with an early exit tells a guesser how much of it was right.
bool same_in_constant_time(std::string_view a, std::string_view b);

}  // namespace gpucheck
