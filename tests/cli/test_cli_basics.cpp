// The command line's contract: help, version, exit codes for bad input.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;

TEST(Cli, VersionNamesVersionCommitAndBackends) {
  auto r = run_gpucheck({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out,
              ::testing::MatchesRegex(
                  "gpucheck [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [0-9a-f]+; backends: cpu.*\\)\n"));
  EXPECT_THAT(r.out, HasSubstr("backends: cpu"));
}

TEST(Cli, HelpListsCommandsAndExitCodes) {
  auto r = run_gpucheck({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("probe"));
  EXPECT_THAT(r.out, HasSubstr("Exit codes"));
  EXPECT_THAT(r.out, HasSubstr("3  bench only"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("__child")));
}

TEST(Cli, NoSubcommandIsUsageErrorNamingEveryCommand) {
  auto r = run_gpucheck({});
  EXPECT_EQ(r.exit_code, 2);
  // Every command --help lists, stress included; the hidden child command never.
  EXPECT_THAT(r.err, HasSubstr("a command is required: probe, bench, doctor, qualify, stress or "
                               "report\n"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("__child")));
}

TEST(Cli, UnknownFlagIsUsageErrorNamingIt) {
  auto r = run_gpucheck({"probe", "--bogus-flag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--bogus-flag"));
}

TEST(Cli, MalformedValueIsUsageErrorNamingFlagAndValue) {
  auto r = run_gpucheck({"probe", "--probe-timeout", "soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--probe-timeout"));
  EXPECT_THAT(r.err, HasSubstr("soon"));
  r = run_gpucheck({"probe", "--probe-timeout", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--probe-timeout"));
}

TEST(Cli, UnknownFormatIsUsageError) {
  auto r = run_gpucheck({"probe", "--format", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--format"));
  EXPECT_THAT(r.err, HasSubstr("xml"));
}

TEST(Cli, UnwritableOutputFileIsUsageError) {
  auto r = run_gpucheck({"probe", "-o", "/nonexistent-dir/sub/out.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent-dir/sub/out.json"));
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, MissingSysrootIsUsageError) {
  auto r = run_gpucheck({"probe", "--sysroot", "/no/such/root"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--sysroot"));
}

// A typo is named first, with the nearest known word: a command, a flag, a value of a fixed
// set, a check id (CLI11 alone said "The following argument was not expected: benc").
TEST(Cli, TyposAreNamedFirstWithTheNearestKnownWord) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"benc"}, "gpucheck: unknown command 'benc' for 'gpucheck' (did you mean 'bench'?)\n"},
      {{"bench", "--sise", "small"},
       "gpucheck: unknown option --sise of 'gpucheck bench' (did you mean '--size'?)\n"},
      {{"bench", "--device", "cpu", "--size", "smal"},
       "gpucheck: --size: no preset 'smal' (did you mean 'small'?)"},
      {{"bench", "--device", "cpu", "--ops", "exp,gem"},
       "gpucheck: --ops: unknown value 'gem' (did you mean 'gemm'?)"},
      {{"doctor", "--fail-on", "warm"},
       "gpucheck: --fail-on: 'warm' is not one of fail, warn (did you mean 'warn'?)\n"},
      {{"report", "shw", "x.json"},
       "gpucheck: unknown command 'shw' for 'gpucheck report' (did you mean 'show'?)\n"},
      {{"probe", "--format=jsn"}, "(did you mean 'json'?)"},
  };
  for (const auto& [args, want] : cases) {
    auto r = run_gpucheck(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_THAT(r.err, HasSubstr(want)) << args[0];
    EXPECT_TRUE(r.out.empty());
  }
  // Nothing near: named, with no guess.
  auto r = run_gpucheck({"zzzzzz"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'zzzzzz' for 'gpucheck'\n"));
  r = run_gpucheck({"doctor", "--only", "nvidia_xidd"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nvidia_xidd (did you mean 'nvidia_xid'?)"));
}
