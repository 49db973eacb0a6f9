-- contract: 8a88c1f drops instances.message, which no binary since 8a88c1f reads or writes
-- (an example: the check only needs the commit to be in the history).
ALTER TABLE instance.instances DROP COLUMN message;
