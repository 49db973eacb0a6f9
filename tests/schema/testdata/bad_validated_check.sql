ALTER TABLE stock.specs ADD CONSTRAINT specs_price_positive CHECK (price_micros_per_hour > 0);
