// What p2p's and latency's units tell the group engine of a copy cell (OpUnit::peer_copies): the
// copies in the record's order, the devices the record is identified by, latency's pieces, and
// the refusals the unit knows before any group is asked.
#include "bench/ops/op_unit.h"
#include "bench/ops/p2p.h"
#include "bench/ops/peer_copies.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using namespace gpucheck;
using namespace gpucheck::bench;
using Copies = std::vector<std::pair<std::size_t, std::size_t>>;

const std::vector<std::string> kFour = {"cuda0", "cuda1", "cuda2", "cuda3"};

PeerCopies copies_of(const Cell& c, const std::vector<std::string>& group = kFour) {
  const auto hook = unit_of(c.op).peer_copies;
  EXPECT_NE(hook, nullptr);
  return hook(c, group);
}

Cell pair(const std::string& src, const std::string& dst, bool both_ways, bool peer = true,
          CopyEngine engine = CopyEngine::kCe) {
  return planned_cell(DType::kF32, P2pShape{4096, both_ways, src, dst, peer, engine});
}

Cell fan(P2pFan f, const std::string& src, const std::string& dst, std::uint64_t copies) {
  P2pShape s{4096, false, src, dst, true, CopyEngine::kCe};
  s.fan = f;
  s.copies = copies;
  return planned_cell(DType::kF32, s);
}

Cell latency(const std::string& src, const std::string& dst, bool peer) {
  LatencyShape l;
  l.mode = LatencyMode::kP2p;
  l.src = src, l.dst = dst, l.peer_access = peer, l.bytes = kP2pLatencyBytes;
  return planned_cell(DType::kF32, l);
}

TEST(OpUnitPeerCopies, APairIsOneCopyOrOneEachWay) {
  const PeerCopies one = copies_of(pair("cuda3", "cuda1", false));
  EXPECT_EQ(one.copies, (Copies{{3, 1}}));
  EXPECT_EQ(one.devices, (std::vector<std::size_t>{3, 1}));
  EXPECT_EQ(one.first, "cuda3");
  EXPECT_EQ(one.second, "cuda1");
  EXPECT_EQ(one.label, "cuda3→cuda1");
  EXPECT_EQ(one.bytes, 4096u);
  EXPECT_EQ(one.pieces, 1);
  EXPECT_TRUE(one.summed_rate);
  EXPECT_FALSE(one.fan);
  EXPECT_FALSE(one.refusal);
  EXPECT_FALSE(one.absent);

  const PeerCopies both = copies_of(pair("cuda0", "cuda2", true));
  EXPECT_EQ(both.copies, (Copies{{0, 2}, {2, 0}}));
  EXPECT_EQ(both.label, "cuda0↔cuda2");
}

TEST(OpUnitPeerCopies, FansListTheirCopiesInRecordOrderAndNameTheirOneDevice) {
  const PeerCopies in = copies_of(fan(P2pFan::kAllToOne, "all", "cuda2", 3));
  EXPECT_EQ(in.copies, (Copies{{0, 2}, {1, 2}, {3, 2}}));
  EXPECT_EQ(in.first, "cuda2");
  EXPECT_EQ(in.second, "");
  EXPECT_TRUE(in.fan);
  EXPECT_EQ(in.label, "all_to_one 3 copies");
  EXPECT_EQ(in.devices, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_FALSE(in.refusal);

  const PeerCopies out = copies_of(fan(P2pFan::kOneToAll, "cuda1", "all", 3));
  EXPECT_EQ(out.copies, (Copies{{1, 0}, {1, 2}, {1, 3}}));
  EXPECT_EQ(out.first, "cuda1");

  const PeerCopies every = copies_of(fan(P2pFan::kAllToAll, "all", "all", 12));
  ASSERT_EQ(every.copies.size(), 12u);
  EXPECT_EQ(every.copies.front(), (std::pair<std::size_t, std::size_t>{0, 1}));
  EXPECT_EQ(every.copies[3], (std::pair<std::size_t, std::size_t>{1, 0}));
  EXPECT_EQ(every.copies.back(), (std::pair<std::size_t, std::size_t>{3, 2}));
  EXPECT_EQ(every.first, "cuda0");  // the group's first
  EXPECT_EQ(every.label, "all_to_all 12 copies");
}

TEST(OpUnitPeerCopies, AFanWhoseCopyCountIsNotTheGroupsIsRefused) {
  const PeerCopies c = copies_of(fan(P2pFan::kAllToOne, "all", "cuda1", 2));
  ASSERT_TRUE(c.refusal);
  EXPECT_EQ(*c.refusal, "all_to_one over 4 devices is 3 copies, not 2");
  const PeerCopies three =
      copies_of(fan(P2pFan::kAllToAll, "all", "all", 12), {"cuda0", "cuda1", "cuda2"});
  ASSERT_TRUE(three.refusal);
  EXPECT_EQ(*three.refusal, "all_to_all over 3 devices is 6 copies, not 12");
}

TEST(OpUnitPeerCopies, LatencyIsOneCopyCutIntoPieces) {
  const PeerCopies c = copies_of(latency("cuda1", "cuda0", false));
  EXPECT_EQ(c.copies, (Copies{{1, 0}}));
  EXPECT_EQ(c.pieces, kLatencyCopiesPerRep);
  EXPECT_EQ(c.bytes, kP2pLatencyBytes * kLatencyCopiesPerRep);
  EXPECT_FALSE(c.summed_rate);
  EXPECT_FALSE(c.peer_access);
  EXPECT_FALSE(c.sm);
  EXPECT_EQ(c.first, "cuda1");
  EXPECT_EQ(c.second, "cuda0");
  EXPECT_EQ(c.label, "cuda1→cuda0");
  EXPECT_FALSE(c.refusal);
}

TEST(OpUnitPeerCopies, WhatNoGroupCanRunSaysWhyAndADeviceOutsideTheGroupIsNamed) {
  EXPECT_EQ(copies_of(pair("cuda2", "cuda2", false)).refusal, "a peer copy needs two devices");
  EXPECT_EQ(copies_of(latency("cuda0", "cuda0", true)).refusal, "a peer copy needs two devices");
  const auto sm = copies_of(pair("cuda0", "cuda1", false, false, CopyEngine::kSm)).refusal;
  ASSERT_TRUE(sm);
  EXPECT_NE(sm->find("needs peer access"), std::string::npos);
  EXPECT_FALSE(copies_of(pair("cuda0", "cuda1", false, true, CopyEngine::kSm)).refusal);

  // A device outside the group: named, and the record still knows its devices by name.
  const PeerCopies outside = copies_of(pair("cuda1", "cuda9", false));
  EXPECT_EQ(outside.absent, "cuda9");
  EXPECT_TRUE(outside.copies.empty());
  EXPECT_EQ(outside.first, "cuda1");
  EXPECT_EQ(outside.second, "cuda9");
  EXPECT_EQ(copies_of(pair("cuda8", "cuda9", false)).absent, "cuda8");
  EXPECT_EQ(copies_of(fan(P2pFan::kOneToAll, "cuda7", "all", 3)).absent, "cuda7");
  EXPECT_EQ(copies_of(latency("cuda0", "cuda5", true)).absent, "cuda5");
}

TEST(OpUnitPeerCopies, OnlyCopyOpsDescribeCopies) {
  EXPECT_EQ(unit_of(Op::kAllreduce).peer_copies, nullptr);
  EXPECT_EQ(unit_of(Op::kGemm).peer_copies, nullptr);
}

}  // namespace
