// Core pieces for trustworthy runs: outputs complete or untouched (temporary file + rename, the
// reason of every failure), inputs bounded and regular files only (FIFOs not blocking), JSON
// nesting bounded at parse, results streamed record by record, and secrets kept out of documents.
#include "core/document.h"
#include "core/environment.h"
#include "core/errors.h"
#include "core/files.h"
#include "core/json_input.h"
#include "core/output_file.h"
#include "report/schema_check.h"
#include "scratch_root.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using namespace gpucheck;
using gpucheck::testing::ScratchRoot;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

using OutputFile = ScratchRoot;

TEST_F(OutputFile, ReplacesAtomicallyKeepingTheModeAndLeavingNoTemporary) {
  const fs::path out = root_ / "doc.json";
  write("doc.json", "old");
  ::chmod(out.c_str(), 0640);
  write_output_file(out, "new contents", "-o");
  EXPECT_EQ(slurp(out), "new contents");
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(root_)) entries += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(entries, 1u);  // no .doc.json.tmp-* left behind
}

TEST_F(OutputFile, ASymlinkStaysALinkAndItsTargetIsWritten) {
  write("real/target.prom", "old");
  fs::create_symlink(root_ / "real/target.prom", root_ / "link.prom");
  write_output_file(root_ / "link.prom", "fresh", "-o");
  EXPECT_TRUE(fs::is_symlink(root_ / "link.prom"));
  EXPECT_EQ(slurp(root_ / "real/target.prom"), "fresh");
}

TEST_F(OutputFile, FailuresSayWhyAndLeaveThePreviousFile) {
  EXPECT_NE(usage_message([&] {
              check_output_path((root_ / "no/such/dir/x.json").string(), "-o");
            }).find("No such file or directory"),
            std::string::npos);
  EXPECT_NE(usage_message([&] { check_output_path(root_.string(), "-o"); }).find("Is a directory"),
            std::string::npos);
  if (::geteuid() != 0) {
    fs::create_directories(root_ / "locked");
    write("locked/doc.json", "previous");
    ::chmod((root_ / "locked").c_str(), 0555);
    EXPECT_NE(usage_message([&] {
                write_output_file(root_ / "locked/doc.json", "x", "-o");
              }).find("Permission denied"),
              std::string::npos);
    EXPECT_EQ(slurp(root_ / "locked/doc.json"), "previous");
    ::chmod((root_ / "locked").c_str(), 0755);
  }
  // A device is written in place: /dev/full says why it cannot take the data.
  EXPECT_NE(usage_message([&] {
              write_output_file("/dev/full", "x", "-o");
            }).find("No space left on device"),
            std::string::npos);
  EXPECT_NO_THROW(write_output_file("/dev/null", "x", "-o"));
}

using InputFile = ScratchRoot;

TEST_F(InputFile, RegularFilesOnlyBoundedAndFifosDoNotBlock) {
  write("p.toml", "name = 'x'\n");
  EXPECT_EQ(read_input_file((root_ / "p.toml").string(), 100, "--profile"), "name = 'x'\n");
  EXPECT_NE(usage_message([&] {
              read_input_file((root_ / "p.toml").string(), 4, "--profile");
            }).find("the limit is 4"),
            std::string::npos);
  EXPECT_NE(usage_message([&] {
              read_input_file(root_.string(), 100, "--config");
            }).find("it is a directory"),
            std::string::npos);
  EXPECT_NE(usage_message([&] {
              read_input_file("/dev/zero", 100, "--profile");
            }).find("it is a character device"),
            std::string::npos);
  ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(usage_message([&] {
              read_input_file((root_ / "fifo").string(), 100, "report show");
            }).find("it is a FIFO"),
            std::string::npos);
  EXPECT_FALSE(read_text_file(root_ / "fifo").has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_NE(usage_message([&] {
              read_input_file((root_ / "none").string(), 100, "--facts");
            }).find("No such file or directory"),
            std::string::npos);
}

TEST(JsonInput, NestingIsBoundedAtParse) {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  const std::string m = usage_message([&] { parse_json_input(deep, "'deep.json'"); });
  EXPECT_NE(m.find("nested deeper than 64 levels (byte 65)"), std::string::npos) << m;
  // Brackets inside strings do not count.
  EXPECT_NO_THROW(parse_json_input(
      R"({"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["})", "x"));
  EXPECT_NE(usage_message([&] {
              parse_json_input("{\"a\":", "'bad.json'");
            }).find("'bad.json': not JSON"),
            std::string::npos);
}

TEST(JsonInput, ResultsStreamRecordByRecord) {
  std::vector<std::pair<std::size_t, nlohmann::json>> seen;
  auto doc = parse_json_input(
      R"({"schema":"gpucheck/1","results":[{"op":"exp","shape":{"n":1}},{"op":"gemm"}],"x":[[1]]})",
      "x", [&](std::size_t i, nlohmann::json&& r) { seen.emplace_back(i, std::move(r)); });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, 0u);
  EXPECT_EQ(seen[0].second["shape"]["n"], 1);
  EXPECT_EQ(seen[1].second["op"], "gemm");
  EXPECT_EQ(doc["results"], nlohmann::json::array());
  EXPECT_EQ(doc["x"], nlohmann::json::parse("[[1]]"));
}

TEST(JsonInput, BuildsTheDocumentNlohmannsOwnParserBuilds) {
  const std::string text =
      R"({"a":[1,-2,3.5,1e300,18446744073709551615,true,false,null,"\u00e9\n"],)"
      R"("b":{"c":{"d":[[],{}]},"c":2},"results":{"not":"records"},"e":[{"x":1},{"x":2}],)"
      R"("":"empty key"})";
  EXPECT_EQ(parse_json_input(text, "x"), nlohmann::json::parse(text));
  EXPECT_EQ(parse_json_input("[1,[2],{\"3\":4}]", "x"), nlohmann::json::parse("[1,[2],{\"3\":4}]"));
  EXPECT_EQ(parse_json_input(" 7 ", "x"), 7);
  EXPECT_EQ(parse_json_input(R"("s")", "x"), "s");
  // Trailing bytes after the value are not JSON.
  EXPECT_NE(usage_message([&] { parse_json_input("{} {}", "'two.json'"); }).find("not JSON"),
            std::string::npos);
}

TEST(JsonInput, EveryKindOfRecordStreamsAndOnlyTheTopResults) {
  std::vector<nlohmann::json> seen;
  const auto doc = parse_json_input(
      R"({"inner":{"results":[1,2]},"results":[3,[4,{"results":[5]}],{"r":6},null],"after":[7]})",
      "x", [&](std::size_t i, nlohmann::json&& r) {
        EXPECT_EQ(i, seen.size());
        seen.push_back(std::move(r));
      });
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], 3);
  EXPECT_EQ(seen[1], nlohmann::json::parse(R"([4,{"results":[5]}])"));
  EXPECT_EQ(seen[2], nlohmann::json::parse(R"({"r":6})"));
  EXPECT_EQ(seen[3], nullptr);
  EXPECT_EQ(doc, nlohmann::json::parse(R"({"inner":{"results":[1,2]},"results":[],"after":[7]})"));
}

TEST(Secrets, CredentialsAreRecordedAsSetOnly) {
  EnvMap env{{"NV_API_TOKEN", "s3cret"},
             {"CUDA_PASSWORD", "x-pass"},
             {"NCCL_IB_AUTH_KEY", "k"},
             {"CUDA_VISIBLE_DEVICES", "0,1"},
             {"POCL_DEVICES", "cpu"},
             {"AWS_SECRET_ACCESS_KEY", "aws"},
             {"HOME", "/root"},
             {"PIP_INDEX_URL", "https://user:hunter2@pypi.example/simple"},
             {"CUDA_CACHE_URL", "https://bob:pw@cache.example:8443/x"}};
  const EnvMap rec = recorded_environment(env);
  EXPECT_EQ(rec.count("NV_API_TOKEN"), 0u);  // not a GPU set-up name at all
  EXPECT_EQ(rec.at("CUDA_PASSWORD"), kSetNotRecorded);
  EXPECT_EQ(rec.at("NCCL_IB_AUTH_KEY"), kSetNotRecorded);
  EXPECT_EQ(rec.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(rec.at("POCL_DEVICES"), "cpu");
  EXPECT_EQ(rec.count("AWS_SECRET_ACCESS_KEY") + rec.count("HOME") + rec.count("PIP_INDEX_URL"),
            0u);
  EXPECT_EQ(rec.at("CUDA_CACHE_URL"), "https://cache.example:8443/x");
  const nlohmann::json doc = make_document(
      "bench", {"gpucheck", "--config", "https://alice:pw@h.example/p.toml", "--x=ftp://u@f/x"},
      env);
  const std::string text = doc.dump();
  for (const char* secret : {"s3cret", "x-pass", "hunter2", "alice", "pw@", "u@f", "aws"})
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << text;
  EXPECT_EQ(doc["provenance"]["argv"][2], "https://h.example/p.toml");
  EXPECT_EQ(doc["provenance"]["argv"][3], "--x=ftp://f/x");
}

TEST(Secrets, UrlUserInformationIsStripped) {
  EXPECT_EQ(strip_url_credentials("see https://u:p@host/a?b=c@d and git+ssh://git@github.com/x"),
            "see https://host/a?b=c@d and git+ssh://github.com/x");
  EXPECT_EQ(strip_url_credentials("no url here: a@b"), "no url here: a@b");
  EXPECT_EQ(strip_url_credentials("://x@y"), "://x@y");              // no scheme: not a URL
  EXPECT_EQ(strip_url_credentials("http://h/x@y"), "http://h/x@y");  // @ in the path
}

TEST(SchemaCheck, FirstProblemWithItsJsonPointer) {
  const auto& s = report::SchemaCheck::gpucheck();
  nlohmann::json doc = {{"schema", "gpucheck/1"},
                        {"command", "bench"},
                        {"provenance",
                         {{"gpucheck_version", "1"},
                          {"git_commit", "x"},
                          {"time", "2025-01-01T00:00:00Z"},
                          {"argv", nlohmann::json::array()},
                          {"environment", nlohmann::json::object()},
                          {"backends_built", {"cpu"}}}},
                        {"results", nlohmann::json::array()}};
  EXPECT_FALSE(s.first_problem(doc).has_value());
  doc["results"] = 5;
  auto p = s.first_problem(doc);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pointer, "/results");
  EXPECT_EQ(p->message, "expected array, got an integer");
  doc["results"] = {{{"device", "cpu"},
                     {"backend", "cpu"},
                     {"op", "exp"},
                     {"impl", "k"},
                     {"dtype", "f32"},
                     {"shape", {{"n", "1024"}}},
                     {"transfers", "excluded"},
                     {"status", "failed"},
                     {"reason", "r"}}};
  p = s.first_problem(doc);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pointer, "/results/0/shape/n");
  // An integer as a float is an integer, unless no 64-bit integer holds it: its readers would
  // convert it with undefined behaviour (found by fuzz.seeded_document under UBSan).
  doc["results"][0]["shape"]["n"] = 1024.0;
  EXPECT_FALSE(s.first_problem(doc).has_value());
  doc["results"][0]["shape"]["n"] = 1.8446744073709552e23;
  p = s.first_problem(doc);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pointer, "/results/0/shape/n");
  EXPECT_EQ(p->message, "expected integer, got an integer beyond 64 bits");
  doc["results"][0]["shape"]["n"] = 0x1p64;
  EXPECT_TRUE(s.first_problem(doc).has_value());
  doc["results"][0]["shape"]["n"] = 0x1p63;  // below 2^64: a std::uint64_t holds it
  EXPECT_FALSE(s.first_problem(doc).has_value());
  doc["results"][0]["shape"]["n"] = 1024;
  doc["results"][0]["time_s"] = {{"median", 1},
                                 {"min", 1},
                                 {"max", 1},
                                 {"stddev", 0},
                                 {"reps", 1},
                                 {"truncated", false},
                                 {"samples", std::vector<double>(65, 1.0)}};
  p = s.first_problem(doc);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pointer, "/results/0/time_s/samples");
  EXPECT_EQ(p->message, "more than 64 items");
}

}  // namespace
