-- contract: f94169f12d3a drops instances.message: no release since the first commit uses it
-- (an example; the check needs the commit to be in the previous release's history).
ALTER TABLE instance.instances DROP COLUMN message;
