-- Paged stock lists filter by spec (and state) or by node and walk stock_id: each filter gets an
-- index that ends in stock_id, so a page is an index range, not a scan and a sort.
DROP INDEX stock.stocks_by_spec_state;
DROP INDEX stock.stocks_by_node;
CREATE INDEX stocks_by_spec_state ON stock.stocks (spec_name, state, stock_id);
CREATE INDEX stocks_by_node ON stock.stocks (node_id, stock_id);
CREATE INDEX stocks_by_state ON stock.stocks (state, stock_id);
