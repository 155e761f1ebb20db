// Makes strings from drivers and files safe for every writer: valid UTF-8, no raw control bytes.
#pragma once

#include <string>
#include <string_view>

namespace gpucheck {

// Invalid UTF-8 sequences become U+FFFD; control characters (except none) become "\xNN" text.
// Applied once, where a string from outside (driver, file, environment) enters the program.
std::string sanitize(std::string_view raw);

// Like sanitize, but the control characters in `keep` stay as they are, for a writer that has
// its own escape for them (CSV quotes a newline, Prometheus writes it as "\n"): ESC, BEL and the
// rest still become "\xNN" text, so no output a terminal shows can carry them raw.
std::string sanitize_keeping(std::string_view raw, std::string_view keep);

// Like sanitize, but first cuts at the first NUL, as C APIs return fixed-size buffers.
std::string sanitize_c_buffer(const char* data, std::size_t capacity);

}  // namespace gpucheck
