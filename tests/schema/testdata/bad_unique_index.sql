CREATE UNIQUE INDEX nodes_hostname ON stock.nodes (hostname);
