// gtest helpers shared by the reference evaluator's tests: messages that must name things.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference_evaluator.h"

namespace akg::reference::testing {

inline void expect_contains(const std::string &text, const std::string &fragment) {
  EXPECT_NE(text.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << text;
}

// Expects `f` to throw an Error whose message contains every fragment.
template <class F>
void expect_error(F f, const std::vector<std::string> &fragments) {
  try {
    f();
    ADD_FAILURE() << "no Error thrown";
  } catch (const Error &e) {
    for (const std::string &fragment : fragments) expect_contains(e.what(), fragment);
  }
}

}  // namespace akg::reference::testing
