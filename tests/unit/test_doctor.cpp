// Doctor's framework: statuses, the explicit registry, the per-check catch boundary, --only and
// --skip selection, the SystemView's root prefix and stat overrides, permission judgement, and
// the Python metadata parsers the framework checks use.
#include "core/errors.h"
#include "doctor/check.h"
#include "doctor/registry.h"
#include "doctor/system_view.h"
#include "host/python_envs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

namespace gpucheck::doctor {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A fresh directory under the test's temporary directory, removed at the end.
class TempRoot {
 public:
  TempRoot() {
    path_ = fs::temp_directory_path() /
            ("gpucheck_doctor_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempRoot() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = path_ / rel.substr(rel.starts_with('/') ? 1 : 0);
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(CheckStatus, NamesRoundTripAndSeverityOrders) {
  for (auto s : {CheckStatus::kPass, CheckStatus::kInfo, CheckStatus::kWarn, CheckStatus::kFail,
                 CheckStatus::kSkip})
    EXPECT_EQ(check_status_from_string(to_string(s)), s);
  EXPECT_FALSE(check_status_from_string("PASS").has_value());
  EXPECT_EQ(worse(CheckStatus::kPass, CheckStatus::kWarn), CheckStatus::kWarn);
  EXPECT_EQ(worse(CheckStatus::kFail, CheckStatus::kWarn), CheckStatus::kFail);
  EXPECT_EQ(worse(CheckStatus::kInfo, CheckStatus::kPass), CheckStatus::kInfo);
}

TEST(CheckResult, JsonHasFixOnlyWhenGivenAndSanitisesText) {
  CheckResult r = fail("bad \x01 thing", "do this", {"file: /x\xff"});
  r.id = "some_check";
  auto j = r.to_json();
  EXPECT_EQ(j["id"], "some_check");
  EXPECT_EQ(j["status"], "fail");
  EXPECT_EQ(j["fix"], "do this");
  EXPECT_THAT(j["finding"].get<std::string>(), HasSubstr("\\x01"));
  EXPECT_NO_THROW((void)j.dump());
  EXPECT_FALSE(pass("ok").to_json().contains("fix"));
  EXPECT_EQ(skip("no facts").finding, "not observable here: no facts");
}

TEST(Registry, IdsAreUniqueLowerSnakeWithSummariesAndExplicitOrder) {
  std::set<std::string> ids;
  const std::regex snake("[a-z][a-z0-9_]*");
  for (const auto& c : all_checks()) {
    EXPECT_TRUE(ids.insert(std::string(c.id)).second) << c.id;
    EXPECT_TRUE(std::regex_match(std::string(c.id), snake)) << c.id;
    EXPECT_FALSE(c.summary.empty()) << c.id;
    EXPECT_TRUE(c.run) << c.id;
    EXPECT_TRUE(c.healthy == CheckStatus::kPass || c.healthy == CheckStatus::kInfo) << c.id;
  }
  // The verdict closes the report.
  EXPECT_EQ(all_checks().back().id, "pytorch_cuda_usable");
  EXPECT_NE(find_check("opencl_loader"), nullptr);
  EXPECT_EQ(find_check("bogus"), nullptr);
}

TEST(Registry, ACheckThatThrowsIsSkipNotObservable) {
  SystemView view;
  CheckDef throws_not_observable{
      "t1", "x", CheckStatus::kPass,
      [](const SystemView&) -> CheckResult { throw NotObservable("no /proc here"); }};
  auto r = run_check(throws_not_observable, view);
  EXPECT_EQ(r.status, CheckStatus::kSkip);
  EXPECT_EQ(r.finding, "not observable here: no /proc here");
  EXPECT_EQ(r.id, "t1");

  CheckDef throws_json{"t2", "x", CheckStatus::kPass, [](const SystemView& v) -> CheckResult {
                         return pass(v.facts.at("nothing").get<std::string>());
                       }};
  r = run_check(throws_json, view);
  EXPECT_EQ(r.status, CheckStatus::kSkip);
  EXPECT_THAT(r.finding, HasSubstr("not observable here"));

  CheckDef warn_without_fix{"t3", "x", CheckStatus::kPass,
                            [](const SystemView&) { return warn("hmm", ""); }};
  r = run_check(warn_without_fix, view);
  EXPECT_FALSE(r.fix.empty());
}

TEST(Registry, EveryCheckSurvivesAnEmptyView) {
  // No facts, no files, no environment: every check answers, none throws out of run_check.
  SystemView view;
  TempRoot root;
  view.root = root.path();
  for (const auto& c : all_checks()) {
    auto r = run_check(c, view);
    EXPECT_EQ(r.id, c.id);
    EXPECT_FALSE(r.finding.empty()) << c.id;
  }
}

TEST(Registry, EveryCheckSurvivesFactsOfTheWrongShape) {
  SystemView view;
  TempRoot root;
  view.root = root.path();
  view.facts = nlohmann::json::parse(R"({"host": [], "cpu": {"isa": 3, "threads": "x"},
      "backends": [{"name": "opencl", "status": "available", "loader": 7, "icd_files": {},
                    "platforms": "x", "devices": [1, 2], "env": [],
                    "unregistered_vendor_libraries": [null]},
                   {"name": "cpu", "status": "available", "devices": [{"properties": []}]}]})");
  for (const auto& c : all_checks()) {
    CheckResult r;
    EXPECT_NO_THROW(r = run_check(c, view)) << c.id;
    EXPECT_EQ(r.id, c.id);
  }
}

TEST(Registry, SelectOnlyAndSkipKeepListOrder) {
  auto all = select_checks({}, {});
  EXPECT_EQ(all.size(), all_checks().size());
  auto some = select_checks({"cpu_isa", "opencl_loader"}, {});
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[0]->id, "opencl_loader");  // registry order, not command-line order
  EXPECT_EQ(some[1]->id, "cpu_isa");
  auto fewer = select_checks({}, {"cpu_isa"});
  EXPECT_EQ(fewer.size(), all_checks().size() - 1);
}

TEST(Registry, UnknownIdsAreAUsageErrorNamingThemAndTheNearestKnownOne) {
  try {
    select_checks({"bogus", "cpu_isa", "nvidia_xidd"}, {"nope"});
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_THAT(m, HasSubstr("--only: unknown check id bogus;"));  // nothing near it
    EXPECT_THAT(m, HasSubstr("--only: unknown check id nvidia_xidd (did you mean 'nvidia_xid'?)"));
    EXPECT_THAT(m, HasSubstr("--skip: unknown check id nope"));
    EXPECT_THAT(m, HasSubstr("gpucheck doctor --list"));
    EXPECT_THAT(m, Not(HasSubstr("opencl_loader")));  // not every id
  }
}

TEST(SystemView, ReadsUnderTheRootAndMergesStatOverrides) {
  TempRoot root;
  root.write("/etc/group", "render:x:109:alice,bob\nvideo:x:44:\nbad line\n");
  root.write("/etc/passwd", "alice:x:1000:1000::/home/alice:/bin/sh\n");
  root.write("/dev/dri/card0", "");
  SystemView v;
  v.root = root.path();
  v.stat_overrides["/dev/dri/renderD128"] = {S_IFCHR | 0660, 0, 109};
  v.stat_overrides["/dev/kfd"] = {S_IFCHR | 0666, 0, 0};
  EXPECT_TRUE(v.read_file("/etc/group").has_value());
  EXPECT_FALSE(v.read_file("/etc/shadow").has_value());
  EXPECT_THAT(v.list_dir("/dev/dri"), ::testing::ElementsAre("card0", "renderD128"));
  EXPECT_THAT(v.glob("/dev/dri/renderD*"), ::testing::ElementsAre("/dev/dri/renderD128"));
  EXPECT_TRUE(v.exists("/dev/kfd"));
  EXPECT_TRUE(v.is_dir("/dev"));
  EXPECT_EQ(v.stat("/dev/dri/renderD128")->gid, 109u);
  EXPECT_TRUE(S_ISREG(v.stat("/dev/dri/card0")->mode));
  EXPECT_EQ(v.host_path("/etc/group"), (root.path() / "etc/group").string());
  auto groups = read_groups(v);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "render");
  EXPECT_THAT(groups[0].members, ::testing::ElementsAre("alice", "bob"));
  EXPECT_EQ(user_name(v, 1000), "alice");
  EXPECT_FALSE(user_name(v, 4242).has_value());
}

TEST(SystemView, LiveRootIsThePathItself) {
  SystemView v;
  EXPECT_EQ(v.host_path("/etc/os-release"), "/etc/os-release");
}

TEST(Permissions, JudgedFromModeBitsNotAccess) {
  const FileStat render{S_IFCHR | 0660, 0, 109};
  EXPECT_TRUE(may_read_write(render, {0, {0}}));  // root
  EXPECT_TRUE(may_read_write(render, {1000, {1000, 109}}));
  EXPECT_FALSE(may_read_write(render, {1000, {1000}}));
  // The owner's bits decide for the owner, even when the group's would allow more.
  EXPECT_FALSE(may_read_write({S_IFCHR | 0460, 1000, 109}, {1000, {109}}));
  EXPECT_TRUE(may_read_write({S_IFCHR | 0666, 0, 0}, {1000, {1000}}));
  EXPECT_FALSE(may_read_write({S_IFCHR | 0664, 0, 0}, {1000, {1000}}));  // read-only for others
  EXPECT_EQ(mode_text(S_IFCHR | 0660), "crw-rw----");
  EXPECT_EQ(mode_text(S_IFREG | 0755), "-rwxr-xr-x");
}

TEST(Identity, OfThisProcessHasItsUidAndGroups) {
  auto id = Identity::of_this_process();
  EXPECT_EQ(id.uid, static_cast<std::uint32_t>(::getuid()));
  ASSERT_FALSE(id.gids.empty());
  EXPECT_EQ(id.gids[0], static_cast<std::uint32_t>(::getgid()));
}

TEST(PythonMetadata, TorchVersionPyOfEveryBuildKind) {
  auto cuda = host::parse_torch_version_py(
      "from typing import Optional\n__version__ = '2.3.0+cu121'\ndebug = False\n"
      "cuda: Optional[str] = '12.1'\ngit_version = 'x'\nhip: Optional[str] = None\n");
  ASSERT_TRUE(cuda);
  EXPECT_EQ(cuda->version, "2.3.0+cu121");
  EXPECT_EQ(cuda->cuda, "12.1");
  EXPECT_FALSE(cuda->hip);
  auto old = host::parse_torch_version_py("__version__ = '1.13.1'\ncuda = '11.7'\n");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->cuda, "11.7");
  auto cpu = host::parse_torch_version_py("__version__ = \"2.2.1+cpu\"\ncuda = None\nhip = None\n");
  ASSERT_TRUE(cpu);
  EXPECT_FALSE(cpu->cuda);
  auto rocm =
      host::parse_torch_version_py("__version__ = '2.3.0+rocm6.0'\ncuda = None\nhip = '6.0.3'\n");
  ASSERT_TRUE(rocm);
  EXPECT_EQ(rocm->hip, "6.0.3");
  EXPECT_FALSE(host::parse_torch_version_py("cuda = '12.1'\n"));
}

TEST(PythonMetadata, CudaMajorOfWheelNames) {
  EXPECT_EQ(host::cuda_major_of_wheel("nvidia-cudnn-cu12"), 12);
  EXPECT_EQ(host::cuda_major_of_wheel("nvidia-cublas-cu11"), 11);
  EXPECT_EQ(host::cuda_major_of_wheel("jax-cuda12-plugin"), 12);
  EXPECT_EQ(host::cuda_major_of_wheel("jax-cuda12-pjrt"), 12);
  EXPECT_EQ(host::cuda_major_of_wheel("cupy-cuda12x"), 12);
  EXPECT_EQ(host::cuda_major_of_wheel("cupy-cuda114"), 11);
  EXPECT_EQ(host::cuda_major_of_wheel("cupy-cuda102"), 10);
  EXPECT_FALSE(host::cuda_major_of_wheel("nvidia-ml-py"));
  EXPECT_FALSE(host::cuda_major_of_wheel("cupy"));
  EXPECT_FALSE(host::cuda_major_of_wheel("jax"));
  // CUDA 13's toolkit wheels carry no suffix: the version's major says it.
  EXPECT_EQ(host::cuda_major_of_dist("nvidia-cublas", "13.1.0.3"), 13);
  EXPECT_EQ(host::cuda_major_of_dist("nvidia-cudnn-cu13", "9.13.0.50"), 13);
  EXPECT_FALSE(host::cuda_major_of_dist("nvidia-ml-py", "13.580.82"));
  // These number themselves: CUDA 13 ships cuRAND 10.4 and cuFFT 12.0.
  EXPECT_FALSE(host::cuda_major_of_dist("nvidia-curand", "10.4.0.35"));
  EXPECT_FALSE(host::cuda_major_of_dist("nvidia-cufft", "12.0.0.61"));
  EXPECT_TRUE(host::is_library_wheel("nvidia-cublas", "cublas"));
  EXPECT_TRUE(host::is_library_wheel("nvidia-cublas-cu12", "cublas"));
  EXPECT_FALSE(host::is_library_wheel("nvidia-cublaslt-cu12", "cublas"));
  EXPECT_FALSE(host::is_library_wheel("nvidia-cudnn-frontend", "cudnn"));
}

TEST(PythonEnvironments, OrderDedupAndPyenv) {
  TempRoot root;
  root.write("/opt/conda/bin/python", "");
  root.write("/opt/conda/lib/python3.10/site-packages/x.py", "");
  root.write("/usr/bin/python3", "");
  root.write("/usr/lib/python3/dist-packages/y.py", "");
  root.write("/usr/local/lib/python3.11/dist-packages/z.py", "");
  root.write("/home/a/.pyenv/shims/python", "#!/bin/sh\n");
  root.write("/home/a/.pyenv/version", "3.12.1\nsystem\n");
  root.write("/home/a/.pyenv/versions/3.12.1/lib/python3.12/site-packages/w.py", "");
  root.write("/home/a/.pyenv/versions/3.11.0/lib/python3.11/site-packages/v.py", "");
  fs::create_directories(root.path() / "bin");
  SystemView v;
  v.root = root.path();
  v.env = {{"CONDA_PREFIX", "/opt/conda"},
           {"PATH", "/home/a/.pyenv/shims:/opt/conda/bin:/usr/bin:/bin:relative"}};
  auto envs = host::python_environments(v);
  ASSERT_EQ(envs.size(), 3u);
  EXPECT_EQ(envs[0].origin, "CONDA_PREFIX");
  EXPECT_EQ(envs[0].site_dirs, std::vector<std::string>{"/opt/conda/lib/python3.10/site-packages"});
  EXPECT_EQ(envs[1].prefix, "/home/a/.pyenv/versions/3.12.1");  // only the selected version
  EXPECT_EQ(envs[2].prefix, "/usr");
  EXPECT_THAT(envs[2].site_dirs,
              ::testing::UnorderedElementsAre("/usr/lib/python3/dist-packages",
                                              "/usr/local/lib/python3.11/dist-packages"));
  v.env["PYENV_VERSION"] = "3.11.0";
  envs = host::python_environments(v);
  ASSERT_GE(envs.size(), 2u);
  EXPECT_EQ(envs[1].prefix, "/home/a/.pyenv/versions/3.11.0");
}

TEST(PythonEnvironments, SitePackagesReadsMetadataNotCode) {
  TempRoot root;
  const std::string site = "/venv/lib/python3.11/site-packages";
  root.write(site + "/torch/version.py", "__version__ = '2.1.0+cu118'\ncuda = '11.8'\n");
  root.write(site + "/torch/lib/libcudnn.so.8", "");
  root.write(site + "/nvidia_cublas_cu11-11.11.3.6.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: nvidia-cublas-cu11\nVersion: 11.11.3.6\n\nName: x\n");
  root.write(site + "/Jax_Cuda12_Plugin-0.4.30.dist-info/RECORD", "");  // no METADATA
  root.write(site + "/requests-2.31.0.dist-info/METADATA", "Name: requests\nVersion: 2.31.0\n");
  SystemView v;
  v.root = root.path();
  auto sp = host::read_site_packages(v, site);
  ASSERT_TRUE(sp.torch);
  EXPECT_EQ(sp.torch->cuda, "11.8");
  EXPECT_THAT(sp.torch->bundled_cuda_libs, ::testing::ElementsAre("libcudnn.so.8"));
  ASSERT_EQ(sp.gpu_dists.size(), 2u);
  EXPECT_NE(sp.find("nvidia-cublas-cu11"), nullptr);
  EXPECT_EQ(sp.find("nvidia-cublas-cu11")->version, "11.11.3.6");
  ASSERT_NE(sp.find("jax-cuda12-plugin"), nullptr);
  EXPECT_EQ(sp.find("jax-cuda12-plugin")->version, "0.4.30");
  EXPECT_EQ(sp.find("requests"), nullptr);
  auto majors = sp.cuda_majors();
  EXPECT_EQ(majors.size(), 3u);  // torch 11, cublas 11, jax 12
}

}  // namespace
}  // namespace gpucheck::doctor
