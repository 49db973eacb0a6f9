DROP TABLE IF EXISTS instance.access_codes;
