// The kept library choices (cuDNN engines, cuBLASLt algorithms) of one device: what a search
// keeps is found by the next run, --retune searches again, --no-tune keeps nothing, a file that
// cannot be used (not JSON, nested too deep, another device's) is set aside and rebuilt, a
// malformed entry is dropped; and the tie-break that makes two searches choose alike.
#include "backends/library_choice_cache.h"

#include "scratch_root.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace {

using gpucheck::ChoiceCacheIdentity;
using gpucheck::LibraryChoiceCache;
using gpucheck::pick_within_noise;
using gpucheck::TuningLog;
using gpucheck::TuningMode;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const std::string kKey = gpucheck::choice_key("cudnn", "9.14.0", "conv", "bf16",
                                              "n8 c64 h56 w56 k64 r3 s3 stride1 pad1", "nchw");
const Json kChoice = {{"library", "cudnn"}, {"version", "9.14.0"}, {"id", "engine 7 knobs X=1"}};

class ChoiceCache : public gpucheck::testing::ScratchRoot {
 protected:
  ChoiceCacheIdentity id(const std::string& uuid = "GPU-1234") const {
    return {uuid, "NVIDIA H100 80GB HBM3", "0.9.0"};
  }
  // Opens a fresh cache object as a new run would; its warnings land in warnings_.
  LibraryChoiceCache open(TuningMode mode = TuningMode::kAuto,
                          const ChoiceCacheIdentity& ident = ChoiceCacheIdentity{}) {
    LibraryChoiceCache c;
    c.open(root_, ident.device_uuid.empty() ? id() : ident, mode,
           [this](TuningLog level, const std::string& text) {
             if (level == TuningLog::kWarn) warnings_.push_back(text);
           });
    return c;
  }
  std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::vector<std::string> warnings_;
};

TEST_F(ChoiceCache, WhatASearchKeepsTheNextRunFinds) {
  {
    auto c = open();
    EXPECT_FALSE(c.find(kKey).has_value());
    c.keep(kKey, kChoice);
  }
  auto next = open();
  auto found = next.find(kKey);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ((*found)["id"], "engine 7 knobs X=1");
  EXPECT_FALSE(next.find("cudnn 9.15.0|conv|bf16|x|nchw").has_value());  // another version
  EXPECT_THAT(next.path().filename().string(), HasSubstr("nvidia-h100"));
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(ChoiceCache, RetuneSearchesAgainAndNoTuneKeepsNothing) {
  open().keep(kKey, kChoice);
  auto retune = open(TuningMode::kRetune);
  EXPECT_FALSE(retune.find(kKey).has_value());
  Json other = kChoice;
  other["id"] = "engine 9";
  retune.keep(kKey, other);
  EXPECT_EQ((*open().find(kKey))["id"], "engine 9");
  auto off = open(TuningMode::kOff);
  EXPECT_FALSE(off.is_open());
  EXPECT_FALSE(off.find(kKey).has_value());
}

TEST_F(ChoiceCache, AnotherDevicesFileIsSetAsideNotRead) {
  open(TuningMode::kAuto, id("GPU-other")).keep(kKey, kChoice);
  const auto path = open(TuningMode::kAuto, id("GPU-other")).path();
  // Two UUIDs never share a file; a file of another UUID at this one's path is foreign.
  EXPECT_NE(open().path(), path);
  std::filesystem::copy_file(path, open().path());
  warnings_.clear();
  auto c = open();
  EXPECT_FALSE(c.find(kKey).has_value());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("it belongs to device_uuid 'GPU-other'"));
  EXPECT_TRUE(std::filesystem::exists(c.path().string() + ".bad"));
}

TEST_F(ChoiceCache, MalformedFilesAreSetAsideAndRebuilt) {
  const auto path = open().path();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& text :
       {std::string("{\"format\": \"gpucheck-library-choices/1\", \"identi"), deep,
        std::string("[1, 2]"), std::string("{\"format\": \"gpucheck-library-choices/1\"}")}) {
    warnings_.clear();
    write(path.filename().string(), text);
    auto c = open();
    EXPECT_FALSE(c.find(kKey).has_value());
    ASSERT_EQ(warnings_.size(), 1u) << text.substr(0, 60);
    EXPECT_THAT(warnings_[0], HasSubstr("set aside as " + path.string() + ".bad"));
    EXPECT_EQ(slurp(path.string() + ".bad"), text);
    EXPECT_FALSE(std::filesystem::exists(path));
    c.keep(kKey, kChoice);  // rebuilt by the next search
    EXPECT_TRUE(open().find(kKey).has_value());
  }
}

TEST_F(ChoiceCache, AMalformedEntryIsDroppedAndSearchedAgain) {
  open().keep(kKey, kChoice);
  const auto path = open().path();
  Json doc = Json::parse(slurp(path));
  doc["choices"][kKey]["choice"].erase("id");
  doc["choices"]["other"] = 42;
  write(path.filename().string(), doc.dump());
  auto c = open();
  EXPECT_FALSE(c.find(kKey).has_value());
  EXPECT_FALSE(c.find("other").has_value());
  ASSERT_EQ(warnings_.size(), 2u);
  EXPECT_THAT(warnings_[0], HasSubstr("it names no library and id"));
  EXPECT_FALSE(Json::parse(slurp(path))["choices"].contains(kKey));
}

TEST_F(ChoiceCache, AnotherGpucheckSearchesAgain) {
  open().keep(kKey, kChoice);
  ChoiceCacheIdentity newer = id();
  newer.gpucheck_version = "0.10.0";
  auto c = open(TuningMode::kAuto, newer);
  EXPECT_FALSE(c.find(kKey).has_value());
  EXPECT_TRUE(warnings_.empty());  // stale, not damaged: nothing set aside
  EXPECT_FALSE(std::filesystem::exists(c.path().string() + ".bad"));
}

TEST(PickWithinNoise, TiesGoToTheLibrarysFirst) {
  // 1.00 is fastest, but 1.02 (listed first) is within 3 %: it wins, in every order of timing.
  EXPECT_EQ(pick_within_noise({1.5, 1.02, 1.0}, 0.03), 1u);
  EXPECT_EQ(pick_within_noise({1.5, 1.0, 1.02}, 0.03), 1u);
  // A clear winner stays the winner; candidates that did not run (negative) never win.
  EXPECT_EQ(pick_within_noise({-1, 1.2, 1.0}, 0.03), 2u);
  EXPECT_EQ(pick_within_noise({-1, 2.0}, 0.03), 1u);
  EXPECT_FALSE(pick_within_noise({-1, -1}, 0.03).has_value());
  EXPECT_FALSE(pick_within_noise({}, 0.03).has_value());
}

}  // namespace
