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
