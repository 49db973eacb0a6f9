// How an object is served to a browser. An object's bytes and its Content-Type are the
// tenant's choice (or anyone's who holds a presigned PUT), and the S3 endpoint is a site of
// the platform's: an HTML or SVG object opened from a link would run its scripts there, with
// whatever cookies that site shares with the console. So every object answer (GET, HEAD, 304)
// carries
//
//   X-Content-Type-Options: nosniff   a browser never guesses HTML out of other bytes
//   Content-Security-Policy: sandbox  a document opened anyway gets a unique opaque origin,
//                                     no scripts, no forms, no plugins, no cookies of ours
//
// and an object of an active type (a document a browser renders and could script: HTML,
// XHTML, SVG, XML and XSLT) is served `Content-Disposition: attachment` (downloaded, never
// rendered) unless the request asked for a disposition itself with
// `response-content-disposition`, which only a signer can (it is part of the signed query), so
// a presigned link made to preview a page still works: sandboxed.
//
// None of this changes what S3 clients (the AWS CLI, SDKs, rclone) read: they ignore these
// headers. Operators should still serve S3 on a registrable domain of its own (README.md).
#pragma once

#include <string_view>

#include "services/storage/s3/request_context.h"

namespace gpuaas::storage::s3 {

// Whether a document of `content_type` (any parameters, any case) is one a browser renders
// with scripts: text/html, application/xhtml+xml, image/svg+xml, text/xml, application/xml,
// text/xsl, application/xslt+xml, and any other "+xml" type.
bool IsActiveContentType(std::string_view content_type);

// Sets the headers above on an object answer served as `content_type`.
void SetServedContentHeaders(RequestContext& ctx, std::string_view content_type);

}  // namespace gpuaas::storage::s3
