// Text made safe for HTML and inline SVG: one function for element text and attribute values.
#pragma once

#include <string>
#include <string_view>

namespace gpucheck::report {

// Valid UTF-8 without raw control bytes (core/sanitize.h), then & < > " ' as entities, so any
// driver or file string is inert both as element text and inside a quoted attribute.
std::string html_escape(std::string_view s);

}  // namespace gpucheck::report
