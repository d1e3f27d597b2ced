-- One tick of the demo's write load on the MariaDB source: a new order, a status change, now
-- and then a cancellation or a customer's new tier. Run by load.sh about twice a second.
INSERT INTO orders (customer_id, total, status) VALUES (1 + FLOOR(RAND() * 2000), ROUND(RAND() * 300, 2), 'new');
SET @o = 1 + FLOOR(RAND() * 10000), @d = 1 + FLOOR(RAND() * 10000), @c = 1 + FLOOR(RAND() * 2000);
UPDATE orders SET status = ELT(1 + FLOOR(RAND() * 3), 'paid', 'shipped', 'refunded') WHERE id = @o;
DELETE FROM orders WHERE id = @d AND RAND() < 0.2;
UPDATE customers SET tier = ELT(1 + FLOOR(RAND() * 3), 'basic', 'silver', 'gold') WHERE id = @c AND RAND() < 0.3;
