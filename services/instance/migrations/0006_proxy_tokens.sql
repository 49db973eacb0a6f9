-- Each instance's proxy token (AccessService.GetProxyToken): the secret its workload gets as
-- GPUAAS_PROXY_TOKEN and the access proxy sends to its private ports, so a catalog image's
-- server answers the proxy only. Made when the row is (existing rows get theirs here, as the
-- volatile default runs once per row): three gen_random_uuid()s, 366 bits of PostgreSQL's
-- strong random source (OpenSSL's), as 96 hex digits. Never part of an Instance message.
ALTER TABLE instance.instances
  ADD COLUMN proxy_token text NOT NULL DEFAULT
    replace(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
