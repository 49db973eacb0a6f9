// The access proxy's checks on request heads (services/proxy/request_checks.h) and its cookie
// (access_cookie.h), on what any browser or client may send: no crash, no UB, and
//  - a Transfer-Encoding passes only as the one framing the proxy and the workload agree on;
//  - a safe method that asks for no upgrade always passes the origin check;
//  - the cookie header the workload receives never carries the proxy's cookie;
//  - a cookie verifies only as what was signed, and a signed grant verifies back unchanged.
//
// Input: a flags byte (bit 0: a Transfer-Encoding came, 1: Content-Length came, 2: HTTP/1.0,
// 3: an upgrade), then '\n'-separated: Transfer-Encoding, method, Origin, Sec-Fetch-Site, the
// instance port's own origin, the Cookie header, and a grant's instance, tenant and user.
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "services/proxy/access_cookie.h"
#include "services/proxy/request_checks.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  using ::gpuaas::fuzz::FieldOr;
  using namespace gpuaas::proxy;
  if (size == 0) {
    return 0;
  }
  const uint8_t flags = data[0];
  auto f = gpuaas::fuzz::Fields(gpuaas::fuzz::AsText(data + 1, size - 1), '\n', 9);

  std::optional<std::string_view> te;
  if (flags & 1) {
    te = FieldOr(f, 0);
  }
  const bool has_length = flags & 2;
  const unsigned version = (flags & 4) ? 10 : 11;
  if (HasSafeFraming(te, has_length, version) && te &&
      (has_length || version != 11 ||
       absl::AsciiStrToLower(absl::StripAsciiWhitespace(gpuaas::fuzz::Av(*te))) != "chunked")) {
    Fail("a Transfer-Encoding passed that the workload may frame otherwise");
  }

  RequestOrigin origin{.method = FieldOr(f, 1),
                       .upgrade = (flags & 8) != 0,
                       .origin = FieldOr(f, 2),
                       .fetch_site = FieldOr(f, 3),
                       .own_origin = FieldOr(f, 4)};
  const bool safe = origin.method == "GET" || origin.method == "HEAD" ||
                    origin.method == "OPTIONS" || origin.method == "TRACE";
  if (!FromOwnOriginIfUnsafe(origin) && safe && !origin.upgrade) {
    Fail("a safe request refused by the origin check");
  }

  const std::string_view cookie_header = FieldOr(f, 5);
  const std::string forwarded = WithoutCookie(cookie_header, kAccessCookieName);
  if (!FindCookie(forwarded, kAccessCookieName).empty()) {
    Fail("the proxy's cookie is forwarded to the workload");
  }

  const AccessCookieSigner signer(std::string(32, 'k'));
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  auto verified = signer.Verify(FindCookie(cookie_header, kAccessCookieName), now);
  (void)verified;
  gpuaas::authz::WorkloadGrant grant{.instance_id = std::string(FieldOr(f, 6)),
                                     .port = static_cast<int32_t>(flags) * 257,
                                     .tenant_id = std::string(FieldOr(f, 7)),
                                     .user_id = std::string(FieldOr(f, 8))};
  auto signed_value = signer.Sign(grant, now + absl::Hours(1));
  if (!signed_value.ok()) {
    return 0;
  }
  auto back = signer.Verify(*signed_value, now);
  if (!back.ok() || back->instance_id != grant.instance_id || back->port != grant.port ||
      back->tenant_id != grant.tenant_id || back->user_id != grant.user_id) {
    Fail("a signed grant does not verify back unchanged");
  }
  if (signer.Verify(*signed_value, now + absl::Hours(2)).ok()) {
    Fail("an expired cookie verifies");
  }
  return 0;
}
