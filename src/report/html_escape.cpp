// HTML escaping of every string the HTML view writes.
#include "report/html_escape.h"

#include "core/sanitize.h"

namespace gpucheck::report {

std::string html_escape(std::string_view s) {
  std::string clean = sanitize(s);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace gpucheck::report
