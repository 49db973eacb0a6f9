-- The second action is the bad one: the previous release's inserts omit the column.
ALTER TABLE storage.storages
  ADD COLUMN zone text DEFAULT 'a',
  ADD COLUMN region text NOT NULL;
