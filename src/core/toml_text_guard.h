// Text that toml++ 3.3 (Debian 12's) must never see: a non-ASCII character where the parser
// looks for whitespace (outside strings and comments, or right after a line-ending backslash in
// a multi-line basic string) drives it into TOML_UNREACHABLE, undefined behaviour, for code
// points such as U+00A7 or U+032A (marzer/tomlplusplus#190, marzer/tomlplusplus#295; fixed
// upstream by marzer/tomlplusplus#305).
// Outside strings and comments no non-ASCII character is valid TOML 1.0 anyway, so refusing it
// first loses nothing but a line-ending backslash followed by one, which is refused by name.
#pragma once

#include <string>
#include <string_view>

namespace gpucheck {

// Throws UsageError "PATH:LINE:COLUMN: ..." at the first such character; returns otherwise.
void refuse_text_toml_parser_mishandles(std::string_view text, const std::string& path);

// The text without a leading UTF-8 byte order mark (EF BB BF), which editors on Windows write
// and TOML allows: read as text, not refused as a non-ASCII character before the first key.
std::string_view without_utf8_bom(std::string_view text);

}  // namespace gpucheck
