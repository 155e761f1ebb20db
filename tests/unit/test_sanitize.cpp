// sanitize(): strings from drivers become valid UTF-8 without raw control bytes.
#include "core/sanitize.h"

#include <gtest/gtest.h>

using gpucheck::sanitize;

TEST(Sanitize, KeepsValidUtf8) {
  EXPECT_EQ(sanitize("NVIDIA H100 80GB HBM3"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(sanitize("Gr\xC3\xB6\xC3\x9F" "e \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "Gr\xC3\xB6\xC3\x9F" "e \xE2\x82\xAC \xF0\x9F\x98\x80");
}

TEST(Sanitize, ReplacesInvalidUtf8) {
  EXPECT_EQ(sanitize("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(sanitize("\xC3"), "\xEF\xBF\xBD");                // truncated sequence
  EXPECT_EQ(sanitize("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(sanitize("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST(Sanitize, EscapesControlCharacters) {
  EXPECT_EQ(sanitize("a\tb\nc\x1b[31m\x7f"), "a\\x09b\\x0ac\\x1b[31m\\x7f");
  EXPECT_EQ(sanitize("quote\"back\\slash"), "quote\"back\\slash");
}

TEST(Sanitize, CBufferStopsAtNul) {
  const char buf[8] = {'G', 'P', 'U', '\0', 'x', 'x', 'x', 'x'};
  EXPECT_EQ(gpucheck::sanitize_c_buffer(buf, sizeof buf), "GPU");
  const char full[3] = {'a', 'b', 'c'};
  EXPECT_EQ(gpucheck::sanitize_c_buffer(full, sizeof full), "abc");
}
