// Where the processes of one multi-process run meet before their collective starts: a file on a
// file system every rank sees, or rank 0's TCP address. Every rank sends rank 0 its identity;
// rank 0, once all have come, answers every rank with one text (the collective's id and the
// layout of its ranks). Nothing here knows NCCL or CUDA, so the exchange is tested without a GPU.
//
// Nothing waits forever: a rank that does not meet the others within the timeout, a file left
// by an earlier run, or a peer of another run ends in UsageError (exit 2) naming what it waited
// for. Strangers cannot join: with a shared secret (the token) every message proves it knows it
// (core/rendezvous_wire), and without one the ranks meet only on loopback or through files in a
// directory other users cannot write. Bad bytes from a peer are refused, never an exit; rank 0
// bounds how many connections wait, how long and how many bytes each may send.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpucheck {

struct RendezvousPlace {
  std::string file;  // the file form: its path
  std::string host;  // the TCP form: rank 0's host and port
  std::uint16_t port = 0;
  bool tcp() const { return file.empty(); }
  std::string describe() const;  // "FILE" or "HOST:PORT"
};

// "HOST:PORT" (the part after the last colon all digits, 1 to 65535) or a file path; UsageError
// naming --rendezvous for an empty text, a port out of range or an empty host.
RendezvousPlace parse_rendezvous(const std::string& text);

struct RendezvousRequest {
  RendezvousPlace place;
  int rank = 0;
  int world_size = 1;
  // The run's own key where the launcher gives one (Slurm's job and step): a file or peer of
  // another key belongs to another run.
  std::string session;
  double timeout_s = 60;
  std::string identity;  // this rank's identity, any text (rank 0 collects them)
  // The secret every rank of the run shares (GPUCHECK_RENDEZVOUS_TOKEN); empty: none. Never
  // sent, logged or written anywhere.
  std::string token;
  // How long rank 0 waits for a connection's hello before closing it.
  double hello_timeout_s = 10;
};

struct RendezvousResult {
  std::string answer;                   // rank 0's answer, on every rank
  std::vector<std::string> identities;  // by rank; rank 0 only (the others: empty)
};

// Rank 0's answer, made once every rank has met, from their identities (index = rank).
using RendezvousAnswer = std::function<std::string(const std::vector<std::string>&)>;

// UsageError (exit 2) before any work when meeting there would let strangers in: a TCP address
// that is not loopback without a token (naming GPUCHECK_RENDEZVOUS_TOKEN and docs/FLEET.md), a
// token shorter than 16 characters, a FILE in a directory every user may write (as /tmp).
void check_rendezvous_place(const RendezvousPlace& place, const std::string& token);

// Meets the other ranks. Rank 0 calls `answer` once; the others ignore it.
RendezvousResult rendezvous(const RendezvousRequest& request, const RendezvousAnswer& answer);

// Rank 0, once every rank has its answer (their collective started): removes the rendezvous
// file where a rank never said it had read it (rank 0 removes it itself once all have), so a
// later run never reads it; only a file this process wrote. Nothing for the TCP form; a missing
// file is no error.
void retire_rendezvous(const RendezvousPlace& place);

}  // namespace gpucheck
