ALTER TABLE stock.nodes ADD CONSTRAINT nodes_hostname_unique UNIQUE (hostname);
