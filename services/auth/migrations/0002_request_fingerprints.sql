-- Idempotency records remember what was asked (libs/service RequestLog), so a request id reused
-- for a different request is refused instead of answered with the first result. Rows from
-- before carry no fingerprint and match on the key alone.
ALTER TABLE auth.requests ADD COLUMN request_hash text NOT NULL DEFAULT '';
