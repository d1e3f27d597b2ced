#!/usr/bin/env bash
# Records what a real agent answers, for the page tests that run without servers
# (tst_recorded replays agent-recording.json through a RecordedDoor).
#
#   bash tests/support/servers.sh start /tmp/s.env
#   bash tests/gui/data/record-agent.sh /tmp/s.env build/ci/app/driftless-cli
#   bash tests/support/servers.sh stop /tmp/s.env
#
# A workspace of three tables (CDC, cursor, full refresh) syncs between two Postgres databases;
# a row is made to drift and a reconciliation finds it; then every read the pages make is
# recorded with its status and body. Ports, passwords and database names are replaced by
# placeholders, so the recording says nothing of the machine it was made on.
set -euo pipefail
env_file=$1
cli=$(realpath "$2")
out=$(cd "$(dirname "$0")" && pwd)/agent-recording.json
# shellcheck disable=SC1090
. "$env_file"
export PGPASSWORD=$PG_PASSWORD
work=$(mktemp -d)
serve=
trap '[ -n "$serve" ] && kill "$serve" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"' EXIT
psql() { command psql -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$@"; }
src=rec_src_$$
dst=rec_dst_$$
psql -d postgres -c "CREATE DATABASE $src" -c "CREATE DATABASE $dst"
psql -d "$src" <<'SQL'
CREATE TABLE orders (id int PRIMARY KEY, customer int NOT NULL, total numeric(10,2), updated_at timestamptz DEFAULT now());
INSERT INTO orders SELECT g, g % 40, g * 1.5, now() FROM generate_series(1, 500) g;
CREATE TABLE customers (id int PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO customers SELECT g, 'customer ' || g, now() FROM generate_series(1, 40) g;
CREATE TABLE plans (code text PRIMARY KEY, price numeric(8,2));
INSERT INTO plans VALUES ('basic', 9), ('pro', 29), ('team', 99);
SQL
dsn() { echo "host=$PG_HOST port=$PG_PORT user=$PG_USER dbname=$1"; } # the password: PGPASSWORD
cat >"$work/ws.yaml" <<YAML
endpoints:
  app: { kind: postgres, dsn: "$(dsn "$src")" }
  warehouse: { kind: postgres, dsn: "$(dsn "$dst")" }
pipelines:
  - name: shop
    source: app
    target: warehouse
    tables:
      - { table: public.orders, strategy: cdc, freshness_sla: 60s }
      - { table: public.customers, strategy: cursor, cursor: updated_at, every: 2s, freshness_sla: 5m }
      - { table: public.plans, strategy: full_refresh, every: 5s, freshness_sla: 10m }
YAML
state=$work/workspace.db
"$cli" --state "$state" apply --no-check "$work/ws.yaml" >/dev/null
"$cli" --state "$state" serve --listen 127.0.0.1:0 --monitor-every 1s >"$work/serve.log" 2>&1 &
serve=$!
port=
for _ in $(seq 600); do
    port=$(grep -oE 'agent API at http://127\.0\.0\.1:[0-9]+' "$work/serve.log" | grep -oE '[0-9]+$' || true)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { cat "$work/serve.log"; exit 1; }
token=$("$cli" --state "$state" agent-token)
api() { curl -sS -H "Authorization: Bearer $token" "$@"; }
base=http://127.0.0.1:$port
# Synced, with some history: a few minutes of lag samples are not needed, a few seconds are.
for _ in $(seq 900); do
    states=$(api "$base/api/v1/tables" | python3 -c 'import json,sys; print(" ".join(sorted(t["state"] for t in json.load(sys.stdin)["tables"])))')
    [ "$states" = "ok ok streaming" ] && break
    sleep 0.2
done
for i in $(seq 1 5); do
    psql -d "$src" -c "UPDATE orders SET total = total + 1 WHERE id = $i" -c "UPDATE customers SET name = name || '.', updated_at = now() WHERE id = $i"
    sleep 1
done
sleep 3
# Drift: a row gone from the target, found by a reconciliation.
psql -d "$dst" -c "DELETE FROM orders WHERE id = 42"
job=$(api -X POST -H 'Content-Type: application/json' -d '{"pipeline":"shop"}' "$base/api/v1/reconcile" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"])')
for _ in $(seq 1200); do
    st=$(api "$base/api/v1/jobs/$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    [ "$st" != running ] && break
    sleep 0.1
done
report=$(api "$base/api/v1/jobs/$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["report_id"])')
sleep 2
paths=(
    "/api/v1/snapshot?events=200"
    "/api/v1/reconciles?limit=200"
    "/api/v1/reconciles/$report"
    "/api/v1/slots?fresh=true"
    "/api/v1/engine"
)
for t in public.orders public.customers public.plans; do
    paths+=("/api/v1/lag?pipeline=shop&table=$t" "/api/v1/events?limit=200&pipeline=shop&table=$t")
done
python3 - "$out" "$base" "$token" "$PG_PORT" "$PG_PASSWORD" "$src" "$dst" "${paths[@]}" <<'PY'
import json, sys, time, urllib.request
out, base, token, port, password, src, dst, *paths = sys.argv[1:]
answers = {}
for p in paths:
    req = urllib.request.Request(base + p, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req) as r:
        body = json.load(r)
        status = r.status
    answers["GET " + p] = {"status": status, "body": body}
# What the Workspace page's dialogs ask: Test connection and the pipeline editor's discovery.
for p in ("/api/v1/probe", "/api/v1/discover"):
    req = urllib.request.Request(base + p, data=json.dumps({"endpoint": "app"}).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        answers["POST " + p] = {"status": r.status, "body": json.load(r)}
text = json.dumps({"recorded_at_ms": int(time.time() * 1000), "answers": answers}, indent=1, sort_keys=True)
for old, new in ((password, "PASSWORD"), (src, "shop_app"), (dst, "shop_warehouse"), ("port=" + port, "port=5432"), (":" + port + "/", ":5432/")):
    text = text.replace(old, new)
open(out, "w").write(text + "\n")
PY
kill "$serve"
wait "$serve" || true
psql -d postgres -c "DROP DATABASE $src WITH (FORCE)" -c "DROP DATABASE $dst WITH (FORCE)"
echo "recorded $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["answers"]))' "$out") answers into $out"
