-- contract: 0000000000000000000000000000000000000000 drops instances.message
ALTER TABLE instance.instances DROP COLUMN message;
