// gMock matchers and gtest macros for absl::Status and absl::StatusOr<T>, until our abseil
// (20220623) is new enough to ship its own (LTS 20240722). Same names and meaning as abseil's:
//
//   EXPECT_OK(repo.Create(x));                 ASSERT_OK(status_or);
//   EXPECT_THAT(f(), StatusIs(absl::StatusCode::kNotFound));
//   EXPECT_THAT(f(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("page_size")));
//   EXPECT_THAT(g(), IsOkAndHolds(Eq(42)));
//   ASSERT_OK_AND_ASSIGN(auto pool, db::Pool::Create(options));
//
// Inside namespace gpuaas, `testing::` names gpuaas::testing; write `::testing::` for gtest.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuaas::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// Matches a Status (or a StatusOr's status) by code and message.
class StatusIsMatcherImpl {
 public:
  StatusIsMatcherImpl(::testing::Matcher<absl::StatusCode> code,
                      ::testing::Matcher<const std::string&> message)
      : code_(std::move(code)), message_(std::move(message)) {}

  void DescribeTo(std::ostream* os) const {
    *os << "has a status code that ";
    code_.DescribeTo(os);
    *os << ", and has an error message that ";
    message_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "has a status code that ";
    code_.DescribeNegationTo(os);
    *os << ", or has an error message that ";
    message_.DescribeNegationTo(os);
  }
  bool MatchAndExplain(const absl::Status& status, ::testing::MatchResultListener* listener) const {
    *listener << "which is " << status;
    ::testing::StringMatchResultListener inner;
    if (!code_.MatchAndExplain(status.code(), &inner)) {
      *listener << (inner.str().empty() ? "" : ", whose code " + inner.str());
      return false;
    }
    if (!message_.Matches(std::string(status.message()))) {
      *listener << ", whose message does not match";
      return false;
    }
    return true;
  }

 private:
  ::testing::Matcher<absl::StatusCode> code_;
  ::testing::Matcher<const std::string&> message_;
};

// Adapts StatusIsMatcherImpl to whichever of Status / StatusOr<T> is being matched.
class StatusIsPolymorphic {
 public:
  explicit StatusIsPolymorphic(StatusIsMatcherImpl impl) : impl_(std::move(impl)) {}
  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    return impl_.MatchAndExplain(GetStatus(value), listener);
  }
  void DescribeTo(std::ostream* os) const { impl_.DescribeTo(os); }
  void DescribeNegationTo(std::ostream* os) const { impl_.DescribeNegationTo(os); }

 private:
  StatusIsMatcherImpl impl_;
};

class IsOkPolymorphic {
 public:
  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    if (!status.ok()) *listener << "which is " << status;
    return status.ok();
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK"; }
};

template <typename InnerMatcher>
class IsOkAndHoldsPolymorphic {
 public:
  explicit IsOkAndHoldsPolymorphic(InnerMatcher inner) : inner_(std::move(inner)) {}
  template <typename T>
  bool MatchAndExplain(const absl::StatusOr<T>& value,
                       ::testing::MatchResultListener* listener) const {
    if (!value.ok()) {
      *listener << "which has status " << value.status();
      return false;
    }
    ::testing::StringMatchResultListener inner;
    const bool matches =
        ::testing::SafeMatcherCast<const T&>(inner_).MatchAndExplain(*value, &inner);
    if (!inner.str().empty()) *listener << "which contains a value " << inner.str();
    return matches;
  }
  void DescribeTo(std::ostream* os) const {
    *os << "is OK and has a value that matches the inner matcher";
  }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK or has another value"; }

 private:
  InnerMatcher inner_;
};

}  // namespace internal

// Matches an OK Status or StatusOr.
inline ::testing::PolymorphicMatcher<internal::IsOkPolymorphic> IsOk() {
  return ::testing::MakePolymorphicMatcher(internal::IsOkPolymorphic());
}

// Matches a Status or StatusOr whose code matches `code` (and message matches `message`).
template <typename CodeMatcher, typename MessageMatcher>
::testing::PolymorphicMatcher<internal::StatusIsPolymorphic> StatusIs(CodeMatcher code,
                                                                      MessageMatcher message) {
  return ::testing::MakePolymorphicMatcher(internal::StatusIsPolymorphic(
      internal::StatusIsMatcherImpl(::testing::MatcherCast<absl::StatusCode>(code),
                                    ::testing::MatcherCast<const std::string&>(message))));
}
template <typename CodeMatcher>
::testing::PolymorphicMatcher<internal::StatusIsPolymorphic> StatusIs(CodeMatcher code) {
  return StatusIs(std::move(code), ::testing::_);
}

// Matches an OK StatusOr<T> whose value matches `inner`.
template <typename InnerMatcher>
::testing::PolymorphicMatcher<internal::IsOkAndHoldsPolymorphic<InnerMatcher>> IsOkAndHolds(
    InnerMatcher inner) {
  return ::testing::MakePolymorphicMatcher(
      internal::IsOkAndHoldsPolymorphic<InnerMatcher>(std::move(inner)));
}

}  // namespace gpuaas::testing

#define EXPECT_OK(expr) EXPECT_THAT((expr), ::gpuaas::testing::IsOk())
#define ASSERT_OK(expr) ASSERT_THAT((expr), ::gpuaas::testing::IsOk())

#define GPUAAS_TESTING_CONCAT_INNER_(a, b) a##b
#define GPUAAS_TESTING_CONCAT_(a, b) GPUAAS_TESTING_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (a StatusOr<T>), fails the test and returns when it is not OK, otherwise
// moves the value into `lhs`, which may be a declaration.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  GPUAAS_ASSERT_OK_AND_ASSIGN_IMPL_(GPUAAS_TESTING_CONCAT_(gpuaas_statusor_, __LINE__), lhs, rexpr)
#define GPUAAS_ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                      \
  ASSERT_TRUE(statusor.ok()) << statusor.status();              \
  lhs = std::move(statusor).value()
