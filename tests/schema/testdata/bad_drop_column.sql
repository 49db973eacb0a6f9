-- Drops a column the previous release still reads: refused without a contract marker.
ALTER TABLE instance.instances DROP COLUMN message;
