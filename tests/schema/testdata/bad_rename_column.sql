ALTER TABLE stock.nodes RENAME COLUMN hostname TO host_name;
