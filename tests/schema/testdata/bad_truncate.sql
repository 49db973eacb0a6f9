TRUNCATE stock.operations;
