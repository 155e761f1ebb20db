// The OpenCL device field table, value decoding, error names and platform families.
#if GPUCHECK_HAVE_OPENCL

#include <gtest/gtest.h>

#include "backends/opencl/cl_errors.h"
#include "backends/opencl/device_fields.h"
#include "backends/opencl/icd_inventory.h"
#include "backends/opencl/opencl_probe.h"
#include "core/errors.h"

#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace gpucheck::opencl {
namespace {

using Json = nlohmann::json;

template <typename T>
std::vector<std::byte> bytes_of(const T& value) {
  std::vector<std::byte> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

const DeviceField& field(std::string_view name) {
  const DeviceField* f = find_device_field(name);
  if (f == nullptr) throw std::runtime_error("no field " + std::string(name));
  return *f;
}

std::vector<std::string> fixture_names() {
  std::ifstream in(GPUCHECK_FIXTURES_DIR "/clinfo_fields.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    names.push_back(line);
  }
  return names;
}

TEST(OpenClFields, FixtureListAndTableAgree) {
  const auto names = fixture_names();
  ASSERT_GE(names.size(), 60u);
  std::set<std::string> listed(names.begin(), names.end());
  EXPECT_EQ(listed.size(), names.size()) << "a name is listed twice";
  for (const auto& n : names)
    EXPECT_NE(find_device_field(n), nullptr) << n << " is not in the table";
  for (const auto& f : device_fields())
    EXPECT_TRUE(listed.contains(std::string(f.name))) << f.name << " is not in clinfo_fields.txt";
}

TEST(OpenClFields, TableCoversWhatTheIssueNames) {
  for (const char* n : {"CL_DEVICE_MAX_WORK_ITEM_SIZES",
                        "CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF",
                        "CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE",
                        "CL_DEVICE_HALF_FP_CONFIG",
                        "CL_DEVICE_DOUBLE_FP_CONFIG",
                        "CL_DEVICE_SVM_CAPABILITIES",
                        "CL_DEVICE_IL_VERSION",
                        "CL_DEVICE_ILS_WITH_VERSION",
                        "CL_DEVICE_NUMERIC_VERSION",
                        "CL_DEVICE_OPENCL_C_ALL_VERSIONS",
                        "CL_DEVICE_OPENCL_C_FEATURES",
                        "CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES",
                        "CL_DEVICE_QUEUE_ON_HOST_PROPERTIES",
                        "CL_DEVICE_BUILT_IN_KERNELS",
                        "CL_DEVICE_PCI_BUS_INFO_KHR",
                        "CL_DEVICE_UUID_KHR",
                        "CL_DEVICE_PCI_BUS_ID_NV",
                        "CL_DEVICE_PCI_SLOT_ID_NV",
                        "CL_DEVICE_PCI_DOMAIN_ID_NV",
                        "CL_DEVICE_TOPOLOGY_AMD"}) {
    EXPECT_NE(find_device_field(n), nullptr) << n;
  }
  EXPECT_EQ(field("CL_DEVICE_PCI_BUS_ID_NV").param, 0x4008u);
  EXPECT_EQ(field("CL_DEVICE_PCI_SLOT_ID_NV").param, 0x4009u);
  EXPECT_EQ(field("CL_DEVICE_PCI_DOMAIN_ID_NV").param, 0x400Au);
}

TEST(OpenClFields, EachFieldOnceWithNamesWhereItsTypeNeedsThem) {
  std::set<cl_device_info> params;
  for (const auto& f : device_fields()) {
    EXPECT_TRUE(params.insert(f.param).second) << f.name << " repeats an enum value";
    EXPECT_TRUE(f.name.starts_with("CL_")) << f.name;
    const bool named = f.type == FieldType::kBitfield || f.type == FieldType::kEnum ||
                       f.type == FieldType::kPartitionProperties;
    EXPECT_EQ(named, !f.names.empty()) << f.name << " (" << field_type_name(f.type) << ")";
  }
}

TEST(OpenClFields, JsonKeyIsLowerCase) {
  EXPECT_EQ(json_key("CL_DEVICE_MAX_COMPUTE_UNITS"), "cl_device_max_compute_units");
}

TEST(OpenClFields, DecodesNumbersAndChecksSizes) {
  EXPECT_EQ(decode_field(field("CL_DEVICE_MAX_COMPUTE_UNITS"), bytes_of(cl_uint{132})), 132);
  EXPECT_EQ(decode_field(field("CL_DEVICE_GLOBAL_MEM_SIZE"), bytes_of(cl_ulong{1} << 40)),
            cl_ulong{1} << 40);
  EXPECT_EQ(decode_field(field("CL_DEVICE_MAX_WORK_GROUP_SIZE"), bytes_of(std::size_t{1024})),
            1024);
  EXPECT_EQ(decode_field(field("CL_DEVICE_AVAILABLE"), bytes_of(cl_bool{CL_TRUE})), true);
  const std::size_t sizes[3] = {1024, 1024, 64};
  EXPECT_EQ(decode_field(field("CL_DEVICE_MAX_WORK_ITEM_SIZES"), bytes_of(sizes)),
            Json::parse("[1024, 1024, 64]"));
  const Json wrong = decode_field(field("CL_DEVICE_MAX_COMPUTE_UNITS"), bytes_of(cl_ulong{1}));
  ASSERT_TRUE(wrong.is_object());
  EXPECT_EQ(wrong["error"], "unexpected value size 8 (expected 4)");
}

TEST(OpenClFields, DecodesBitfieldsWithNamesAndUnknownBits) {
  const cl_device_fp_config fp = CL_FP_DENORM | CL_FP_FMA | (cl_ulong{1} << 40);
  EXPECT_EQ(decode_field(field("CL_DEVICE_SINGLE_FP_CONFIG"), bytes_of(fp)),
            (Json{{"raw", fp}, {"flags", {"CL_FP_DENORM", "CL_FP_FMA", "0x10000000000"}}}));
  EXPECT_EQ(decode_field(field("CL_DEVICE_TYPE"), bytes_of(cl_device_type{CL_DEVICE_TYPE_GPU})),
            (Json{{"raw", 4}, {"flags", {"CL_DEVICE_TYPE_GPU"}}}));
  // A driver that answers a bitfield in 32 bits still decodes.
  EXPECT_EQ(decode_field(field("CL_DEVICE_SVM_CAPABILITIES"), bytes_of(cl_uint{9}))["raw"], 9);
}

TEST(OpenClFields, DecodesEnumsVersionsAndNameVersions) {
  EXPECT_EQ(decode_field(field("CL_DEVICE_LOCAL_MEM_TYPE"), bytes_of(cl_uint{CL_LOCAL})),
            "CL_LOCAL");
  EXPECT_EQ(decode_field(field("CL_DEVICE_GLOBAL_MEM_CACHE_TYPE"), bytes_of(cl_uint{7})), "0x7");
  const cl_version v = CL_MAKE_VERSION(3, 0, 0);
  EXPECT_EQ(decode_field(field("CL_DEVICE_NUMERIC_VERSION"), bytes_of(v)),
            (Json{{"raw", 12582912}, {"version", "3.0.0"}}));
  cl_name_version nv[2] = {};
  nv[0].version = CL_MAKE_VERSION(1, 2, 0);
  std::strcpy(nv[0].name, "OpenCL C");
  nv[1].version = CL_MAKE_VERSION(3, 0, 0);
  std::strcpy(nv[1].name, "OpenCL C");  // repeated names stay: it is a list
  const Json decoded = decode_field(field("CL_DEVICE_OPENCL_C_ALL_VERSIONS"), bytes_of(nv));
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0], (Json{{"name", "OpenCL C"}, {"version", "1.2.0"}, {"raw", 4202496}}));
  EXPECT_EQ(decoded[1]["version"], "3.0.0");
}

TEST(OpenClFields, DecodesPartitionPropertiesUpToTheTerminator) {
  const cl_device_partition_property props[3] = {CL_DEVICE_PARTITION_EQUALLY,
                                                 CL_DEVICE_PARTITION_BY_COUNTS, 0};
  EXPECT_EQ(decode_field(field("CL_DEVICE_PARTITION_PROPERTIES"), bytes_of(props)),
            Json::parse(R"(["CL_DEVICE_PARTITION_EQUALLY", "CL_DEVICE_PARTITION_BY_COUNTS"])"));
  const cl_device_partition_property none[1] = {0};
  EXPECT_EQ(decode_field(field("CL_DEVICE_PARTITION_PROPERTIES"), bytes_of(none)), Json::array());
}

TEST(OpenClFields, DecodesIdentity) {
  const unsigned char uuid[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                  0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  EXPECT_EQ(decode_field(field("CL_DEVICE_UUID_KHR"), bytes_of(uuid)),
            "00112233-4455-6677-8899-aabbccddeeff");
  const unsigned char luid[8] = {1, 2, 3, 4, 5, 6, 7, 0xfe};
  EXPECT_EQ(decode_field(field("CL_DEVICE_LUID_KHR"), bytes_of(luid)), "01020304050607fe");
  const cl_device_pci_bus_info_khr pci{1, 0x17, 0x1f, 3};
  EXPECT_EQ(decode_field(field("CL_DEVICE_PCI_BUS_INFO_KHR"), bytes_of(pci)), "0001:17:1f.3");
  cl_device_topology_amd topo{};
  topo.pcie.type = CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
  topo.pcie.bus = static_cast<cl_char>(0xc3);  // buses above 127 are negative cl_chars
  topo.pcie.device = 0;
  topo.pcie.function = 1;
  EXPECT_EQ(decode_field(field("CL_DEVICE_TOPOLOGY_AMD"), bytes_of(topo)), "0000:c3:00.1");
  topo.raw.type = 2;
  EXPECT_TRUE(decode_field(field("CL_DEVICE_TOPOLOGY_AMD"), bytes_of(topo)).contains("error"));
}

TEST(OpenClFields, StringsStopAtNulAndAreSanitized) {
  const char raw[] = "GPU \"x\" \xff\x01\0\0junk";
  std::vector<std::byte> b(sizeof raw);
  std::memcpy(b.data(), raw, sizeof raw);
  EXPECT_EQ(decode_field(field("CL_DEVICE_NAME"), b), "GPU \"x\" \xEF\xBF\xBD\\x01");
}

TEST(OpenClFields, ParsesOpenClVersions) {
  EXPECT_EQ(parse_opencl_version("OpenCL 3.0 PoCL 3.1+debian"), 300);
  EXPECT_EQ(parse_opencl_version("OpenCL 1.2 CUDA 12.4.131"), 120);
  EXPECT_EQ(parse_opencl_version("OpenCL 2.1 AMD-APP (3513.0)"), 210);
  EXPECT_EQ(parse_opencl_version("OpenCL C 1.2"), 0);
  EXPECT_EQ(parse_opencl_version(""), 0);
}

TEST(OpenClFields, AsksFieldsByVersionOrExtension) {
  const std::set<std::string, std::less<>> none;
  const std::set<std::string, std::less<>> fp64{"cl_khr_fp64"};
  EXPECT_TRUE(field_applies(field("CL_DEVICE_NAME"), 100, none));
  EXPECT_FALSE(field_applies(field("CL_DEVICE_NUMERIC_VERSION"), 120, none));
  EXPECT_TRUE(field_applies(field("CL_DEVICE_NUMERIC_VERSION"), 300, none));
  EXPECT_FALSE(field_applies(field("CL_DEVICE_DOUBLE_FP_CONFIG"), 110, none));
  EXPECT_TRUE(field_applies(field("CL_DEVICE_DOUBLE_FP_CONFIG"), 110, fp64));
  EXPECT_TRUE(field_applies(field("CL_DEVICE_DOUBLE_FP_CONFIG"), 120, none));
  EXPECT_FALSE(field_applies(field("CL_DEVICE_PCI_BUS_ID_NV"), 300, none));
  EXPECT_TRUE(
      field_applies(field("CL_DEVICE_PCI_BUS_ID_NV"), 120, {"cl_nv_device_attribute_query"}));
}

TEST(OpenClErrors, NamesCodes) {
  EXPECT_EQ(cl_error_name(CL_INVALID_VALUE), "CL_INVALID_VALUE");
  EXPECT_EQ(cl_error_name(CL_PLATFORM_NOT_FOUND_KHR), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(cl_error_name(CL_MAX_SIZE_RESTRICTION_EXCEEDED), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  EXPECT_EQ(cl_error_name(-9999), "CL_UNKNOWN_ERROR");
  EXPECT_EQ(cl_error_text(-30), "CL_INVALID_VALUE (-30)");
  // Every core code from 0 to -19 and -30 to -72 has a name.
  for (cl_int c = 0; c >= -72; --c) {
    if (c < -19 && c > -30) continue;
    EXPECT_NE(cl_error_name(c), "CL_UNKNOWN_ERROR") << c;
  }
}

TEST(OpenClErrors, CheckThrowsApiErrorNamingTheCall) {
  auto failing = [] { return cl_int{CL_OUT_OF_HOST_MEMORY}; };
  try {
    GC_CL_CHECK(failing());
    FAIL() << "no throw";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.api(), "OpenCL");
    EXPECT_EQ(e.code(), CL_OUT_OF_HOST_MEMORY);
    EXPECT_EQ(e.code_name(), "CL_OUT_OF_HOST_MEMORY");
    EXPECT_EQ(e.call(), "failing()");
  }
  EXPECT_NO_THROW(GC_CL_CHECK(cl_int{CL_SUCCESS}));
}

TEST(OpenClPlatforms, FamilyFromNamesAndVersions) {
  struct Case {
    const char* name;
    const char* vendor;
    const char* version;
    const char* family;
  };
  const Case cases[] = {
      {"NVIDIA CUDA", "NVIDIA Corporation", "OpenCL 3.0 CUDA 12.4.131", "nvidia"},
      {"AMD Accelerated Parallel Processing", "Advanced Micro Devices, Inc.",
       "OpenCL 2.1 AMD-APP (3513.0)", "amd"},
      {"Clover", "Mesa", "OpenCL 1.1 Mesa 22.3.6", "mesa_clover"},
      {"rusticl", "Mesa/X.org", "OpenCL 3.0 ", "mesa_rusticl"},
      {"Portable Computing Language", "The pocl project", "OpenCL 3.0 PoCL 3.1", "pocl"},
      {"Intel(R) OpenCL Graphics", "Intel(R) Corporation", "OpenCL 3.0 ", "intel"},
      {"Intel Gen OCL Driver", "Intel", "OpenCL 2.0 beignet 1.3", "intel"},
      {"Apple", "Apple", "OpenCL 1.2 (Nov 13 2021)", "apple"},
      {"Fake ICD platform 0", "gpucheck fake ICD", "OpenCL 1.2 gpucheck-fake", "other"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(platform_family(c.name, c.vendor, c.version), c.family) << c.name;
}

TEST(OpenClLoader, KindFromLoaderVendor) {
  EXPECT_EQ(loader_kind_name(loader_kind_from_vendor("OCL Icd free software", true)), "ocl-icd");
  EXPECT_EQ(loader_kind_name(loader_kind_from_vendor("Khronos Group", true)), "khronos");
  EXPECT_EQ(loader_kind_name(loader_kind_from_vendor("", false)),
            "khronos (old: no clGetICDLoaderInfoOCLICD)");
  EXPECT_EQ(loader_kind_name(loader_kind_from_vendor("Someone", true)), "other");
}

}  // namespace
}  // namespace gpucheck::opencl

#endif  // GPUCHECK_HAVE_OPENCL
