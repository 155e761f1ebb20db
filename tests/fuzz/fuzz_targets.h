// The readers of outside input, as fuzz targets: a qualify profile (TOML) read and judged, and a
// saved document (JSON) read, checked against the schema, rendered in every format and compared
// with itself. Bad input must end in a UsageError (exit 2); anything else escaping, a crash, a
// hang or undefined behaviour is a bug the fuzzer reports.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpucheck::fuzz {

void profile(const std::uint8_t* data, std::size_t size);
void document(const std::uint8_t* data, std::size_t size);
void rendezvous(const std::uint8_t* data, std::size_t size);  // fuzz_rendezvous.cpp
// A framework child's stdout (bench --framework's answer lines), read into records.
void framework_answer(const std::uint8_t* data, std::size_t size);

}  // namespace gpucheck::fuzz
