-- One tick of the demo's write load: a few events, some order updates, now and then a new
-- order or a price change. Run by load.sh about twice a second.
INSERT INTO events (kind, account, payload)
SELECT (ARRAY['login', 'view', 'click', 'export', 'logout'])[1 + (random() * 4)::int], 1 + (random() * 499)::int,
       jsonb_build_object('ms', (random() * 1000)::int)
FROM generate_series(1, 1 + (random() * 8)::int);
UPDATE orders SET status = (ARRAY['paid', 'shipped', 'refunded'])[1 + (random() * 2)::int], updated_at = now()
WHERE id IN (SELECT 1 + (random() * 19999)::bigint FROM generate_series(1, 3));
INSERT INTO orders (account, plan_id, amount, status)
SELECT 1 + (random() * 499)::int, 1 + (random() * 4)::int, round((random() * 500)::numeric, 2), 'new'
WHERE random() < 0.3;
DELETE FROM orders WHERE id = (SELECT 1 + (random() * 19999)::bigint) AND random() < 0.2;
UPDATE plans SET price = price + 1, updated_at = now() WHERE id = 3 AND random() < 0.02;
