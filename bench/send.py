#!/usr/bin/env python3
"""Bounded notification sender for bench/crash.

Sends exactly COUNT POSTs of BODY_FILE (made by bench_make_body; the signature's last 20 digits are
replaced per request so every body is distinct) to URL from CONCURRENCY keep-alive connections at
about RATE requests/s in total, and writes the event_id of every 200 response to IDS_FILE, one per
line. Never retries: an unacknowledged notification is simply not counted. Prints a JSON summary.

    send.py URL BODY_FILE COUNT CONCURRENCY RATE IDS_FILE
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
target = urllib.parse.urlsplit(url)
template = open(body_file, "rb").read()
prefix, suffix = template[:-22], template[-2:]

lock = threading.Lock()
statuses = Counter()
acknowledged = []


def sender(index: int) -> None:
    share = count // concurrency + (1 if index < count % concurrency else 0)
    interval = concurrency / rate if rate > 0 else 0
    connection = None
    start = time.monotonic()
    local_ids, local_statuses = [], Counter()
    for n in range(share):
        if interval:
            delay = start + n * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        body = prefix + b"%04d%016d" % (index, n) + suffix
        try:
            if connection is None:
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
            connection.request("POST", target.path, body, {"Content-Type": "application/json", "User-Agent": "bench/send.py"})
            response = connection.getresponse()
            payload = response.read()
            local_statuses[response.status] += 1
            if response.status == 200:
                local_ids.append(json.loads(payload)["event_id"])
        except Exception as error:  # connection reset, timeout: not acknowledged
            local_statuses[type(error).__name__] += 1
            if connection is not None:
                connection.close()
            connection = None
    if connection is not None:
        connection.close()
    with lock:
        acknowledged.extend(local_ids)
        statuses.update(local_statuses)


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
}))
