-- The demo's MariaDB source `shop`: customers (cursor sync by updated_at) and orders (binlog
-- change data capture), with a steady write load from load.sh.
CREATE TABLE customers (
    id          int PRIMARY KEY,
    name        varchar(60) NOT NULL,
    country     char(2) NOT NULL,
    tier        enum('basic', 'silver', 'gold') NOT NULL DEFAULT 'basic',
    updated_at  datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    KEY (updated_at)
) ENGINE=InnoDB;
INSERT INTO customers (id, name, country, tier, updated_at)
SELECT seq, CONCAT('Customer ', seq), ELT(1 + seq % 6, 'DE', 'FR', 'US', 'JP', 'BR', 'NL'),
       ELT(1 + seq % 3, 'basic', 'silver', 'gold'), NOW(6) - INTERVAL (2000 - seq) MINUTE
FROM seq_1_to_2000;

CREATE TABLE orders (
    id          bigint unsigned AUTO_INCREMENT PRIMARY KEY,
    customer_id int NOT NULL,
    total       decimal(10,2) NOT NULL,
    status      varchar(12) NOT NULL,
    note        text,
    placed_at   timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB;
INSERT INTO orders (customer_id, total, status, note, placed_at)
SELECT 1 + seq % 2000, ROUND(5 + (seq * 7919 % 50000) / 100, 2), ELT(1 + seq % 4, 'new', 'paid', 'shipped', 'refunded'),
       IF(seq % 7 = 0, 'gift wrap, please ✨', NULL), NOW(3) - INTERVAL (10000 - seq) MINUTE
FROM seq_1_to_10000;
