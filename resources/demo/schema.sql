-- The demo source: three tables, one per strategy's sweet spot.
-- plans: small and rarely written (full refresh); events: append-heavy (cursor);
-- orders: updated in place and deleted (change data capture; a cursor copy goes to SQLite).
CREATE TABLE plans (
    id          integer PRIMARY KEY,
    name        text NOT NULL,
    price       numeric(10,2) NOT NULL,
    features    jsonb NOT NULL DEFAULT '{}',
    updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO plans (id, name, price, features) VALUES
    (1, 'Free', 0, '{"seats": 1}'),
    (2, 'Starter', 9.99, '{"seats": 3}'),
    (3, 'Team', 49.00, '{"seats": 10, "sso": false}'),
    (4, 'Business', 199.00, '{"seats": 50, "sso": true}'),
    (5, 'Enterprise', 999.00, '{"seats": null, "sso": true, "support": "24/7"}');

CREATE TABLE events (
    id          bigserial PRIMARY KEY,
    kind        text NOT NULL,
    account     integer NOT NULL,
    payload     jsonb,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_updated_at ON events (updated_at);
INSERT INTO events (kind, account, payload, occurred_at, updated_at)
SELECT (ARRAY['login', 'view', 'click', 'export', 'logout'])[1 + g % 5], 1 + g % 500,
       jsonb_build_object('session', md5(g::text), 'ms', g % 997),
       now() - (50000 - g) * interval '3 seconds', now() - (50000 - g) * interval '3 seconds'
FROM generate_series(1, 50000) g;

CREATE TABLE orders (
    id          bigserial PRIMARY KEY,
    account     integer NOT NULL,
    plan_id     integer NOT NULL REFERENCES plans (id),
    amount      numeric(12,2) NOT NULL,
    status      text NOT NULL,
    note        text,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orders_updated_at ON orders (updated_at);
INSERT INTO orders (account, plan_id, amount, status, updated_at)
SELECT 1 + g % 500, 1 + g % 5, round((g % 1000) * 1.37, 2),
       (ARRAY['new', 'paid', 'shipped', 'refunded'])[1 + g % 4], now() - (20000 - g) * interval '10 seconds'
FROM generate_series(1, 20000) g;
