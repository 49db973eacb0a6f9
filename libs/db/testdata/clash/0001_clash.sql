-- Holds the raw-string closer )gpuaas_sql" on purpose: embedding must refuse it.
SELECT 1;
