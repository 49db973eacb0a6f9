ALTER TABLE auth.tenants ALTER COLUMN display_name DROP DEFAULT;
