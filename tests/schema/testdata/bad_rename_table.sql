ALTER TABLE IF EXISTS stock.nodes RENAME TO machines;
