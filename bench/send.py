#!/usr/bin/env python3
"""Bounded notification sender for bench/crash.

Sends exactly COUNT POSTs of BODY_FILE (made by bench_make_body; the signature's last 20 digits are
replaced per request so every body is distinct) to URL from CONCURRENCY keep-alive connections at
about RATE requests/s in total, and writes the event_id of every 200 response to IDS_FILE, one per
line. Never retries: an unacknowledged notification is simply not counted. Prints a JSON summary.

With --lines, BODY_FILE holds one complete body per line (`storeledger simulate --output`) and each of
its first COUNT lines is sent once, as it is: connection i sends lines i, i + CONCURRENCY, ..., so the
receiver gets them in about file order.

    send.py URL BODY_FILE COUNT CONCURRENCY RATE IDS_FILE [--lines]
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse
from collections import Counter

url, body_file, count, concurrency, rate, ids_file = sys.argv[1:7]
count, concurrency, rate = int(count), int(concurrency), float(rate)
lines_mode = sys.argv[7:8] == ["--lines"]
target = urllib.parse.urlsplit(url)
if lines_mode:
    with open(body_file, "rb") as f:
        lines = [line.rstrip(b"\n") for line in f if line.strip()]
    if len(lines) < count:
        sys.exit("send.py: %s holds %d bodies, fewer than %d" % (body_file, len(lines), count))
else:
    template = open(body_file, "rb").read()
    prefix, suffix = template[:-22], template[-2:]


def body_for(index: int, n: int) -> bytes:
    if lines_mode:
        return lines[index + n * concurrency]
    return prefix + b"%04d%016d" % (index, n) + suffix

lock = threading.Lock()
statuses = Counter()
acknowledged = []
failures = []  # seconds since the start of every request that got no 200


def sender(index: int) -> None:
    share = count // concurrency + (1 if index < count % concurrency else 0)
    interval = concurrency / rate if rate > 0 else 0
    connection = None
    start = time.monotonic()
    local_ids, local_statuses, local_failures = [], Counter(), []
    for n in range(share):
        if interval:
            delay = start + n * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        body = body_for(index, n)
        try:
            if connection is None:
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
            connection.request("POST", target.path, body, {"Content-Type": "application/json", "User-Agent": "bench/send.py"})
            response = connection.getresponse()
            payload = response.read()
            local_statuses[response.status] += 1
            if response.status == 200:
                local_ids.append(json.loads(payload)["event_id"])
            else:
                local_failures.append(time.monotonic() - started)
        except Exception as error:  # connection reset, timeout: not acknowledged
            local_statuses[type(error).__name__] += 1
            local_failures.append(time.monotonic() - started)
            if connection is not None:
                connection.close()
            connection = None
    if connection is not None:
        connection.close()
    with lock:
        acknowledged.extend(local_ids)
        statuses.update(local_statuses)
        failures.extend(local_failures)


started = time.monotonic()
threads = [threading.Thread(target=sender, args=(i,)) for i in range(concurrency)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.monotonic() - started
with open(ids_file, "w") as f:
    f.writelines("%d\n" % i for i in acknowledged)
print(json.dumps({
    "sent": count,
    "acknowledged": len(acknowledged),
    "statuses": {str(k): v for k, v in statuses.items()},
    "seconds": round(elapsed, 1),
    "rate": round(count / elapsed, 1),
    # When requests were not acknowledged (seconds after the start), e.g. while PostgreSQL was down.
    "unacknowledged_between": [round(min(failures), 1), round(max(failures), 1)] if failures else None,
}))
