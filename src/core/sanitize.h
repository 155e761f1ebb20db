// Makes strings from drivers and files safe for every writer: valid UTF-8, no raw control bytes.
#pragma once

#include <string>
#include <string_view>

namespace gpucheck {

// Invalid UTF-8 sequences become U+FFFD; control characters (except none) become "\xNN" text.
// Applied once, where a string from outside (driver, file, environment) enters the program.
std::string sanitize(std::string_view raw);

// Like sanitize, but first cuts at the first NUL, as C APIs return fixed-size buffers.
std::string sanitize_c_buffer(const char* data, std::size_t capacity);

}  // namespace gpucheck
