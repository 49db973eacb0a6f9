ALTER TABLE stock.gpus ALTER COLUMN memory_mib TYPE integer;
