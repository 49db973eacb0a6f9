-- contract (no commit named)
ALTER TABLE instance.instances DROP COLUMN message;
