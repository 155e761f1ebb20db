// bench's multi-process all-reduce: which rank this process is (--rank/--world-size, or Slurm's
// SLURM_PROCID/SLURM_NTASKS), which of its GPUs take part, what it tells rank 0 about itself and
// what rank 0 answers (NCCL's unique id and where each process's ranks start).
#pragma once

#include "app/bench_devices.h"
#include "backends/peer_group.h"
#include "core/environment.h"
#include "core/rendezvous.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {

struct RankOptions {
  std::optional<int> rank, world_size;
  std::string rendezvous;  // FILE or HOST:PORT
  double rendezvous_timeout_s = 120;
};

struct RankSetup {
  int rank = 0;
  int world_size = 1;
  RendezvousPlace place;
  std::string session;  // Slurm's job.step, else empty
  double timeout_s = 120;
  std::string source;  // "--rank/--world-size" or "Slurm (SLURM_PROCID/SLURM_NTASKS)"
  std::string token;   // GPUCHECK_RENDEZVOUS_TOKEN: the ranks' shared secret, or empty
};

// nullopt: one process (no --rank, --world-size or --rendezvous). With --rendezvous, the rank and
// world size come from the flags, else from Slurm's task variables, and the secret from
// GPUCHECK_RENDEZVOUS_TOKEN. UsageError naming the flag: a rank flag without --rendezvous, one
// of --rank/--world-size without the other, a world size below 1, a rank outside 0..world
// size-1, no rank known at all, a place strangers could join (check_rendezvous_place).
std::optional<RankSetup> resolve_ranks(const RankOptions& options, const EnvMap& env);

// What this rank asks of rendezvous(): the setup's place, rank, run and secret, and its identity.
RendezvousRequest rendezvous_request(const RankSetup& setup, std::string identity);

// The CUDA devices this rank runs on: --device as given when named; under Slurm with several
// GPUs visible, the task's own (cuda<SLURM_LOCALID>: one task per GPU); else every CUDA GPU of
// the process. UsageError when SLURM_LOCALID names a GPU that is not there.
std::vector<std::string> rank_devices(const std::vector<BenchTarget>& cuda_targets,
                                      bool device_named, const EnvMap& env);

// What this rank tells rank 0: its rank, host and devices (name, UUID, PCI bus id, from the
// probe's section), one JSON object.
nlohmann::json rank_identity(int rank, const std::vector<std::string>& devices,
                             const nlohmann::json& backends);

// Every rank's identity as the document records it (index = rank): what another process sent,
// so each text in it is sanitized (valid UTF-8, no raw control bytes: no escape sequence reaches
// a terminal that shows the document); one that is not JSON stays as sanitized text.
nlohmann::json identities_for_document(const std::vector<std::string>& identities);

// Rank 0's answer once all have met: the collective's id and each process's first rank (its
// devices are consecutive ranks). UsageError for an identity that is not one (a peer of
// another program).
std::string rank0_answer(const std::vector<std::string>& identities, const std::string& id);

// This process's part of the all-reduce, from rank 0's answer.
CollectiveSpan span_of(const std::string& answer, int rank);

}  // namespace gpucheck::app
