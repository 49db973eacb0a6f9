-- A node agent's API key is bound to one node: its tokens carry that node and may act for it
-- only (libs/authz RequireNode). Other keys bind to none. The binding is set at creation and
-- never changes; a machine role's key acts in no tenant.
ALTER TABLE auth.api_keys ADD COLUMN node_id text;
ALTER TABLE auth.api_keys ADD CONSTRAINT api_keys_node_bound
  CHECK ((role = 6) = (node_id IS NOT NULL) AND (role NOT IN (6, 7) OR tenant_id IS NULL));
