#!/usr/bin/env python3
"""bench/console's measuring client: signs in to the console, then times every page, one request at a time.

    console_pages.py BASE_URL USER PASSWORD REQUESTS WARMUP LABEL=PATH [LABEL=PATH ...]

One keep-alive HTTP/1.1 connection (as a browser holds), sequential requests, so each figure is one page's latency
as a person would wait for it: from the request's first byte to the response's last. `baseline=/healthz` (or any
label called baseline) is measured the same way and every page's p50 is also given as a ratio to it. Redirects are
not followed (a search that finds one customer answers 303: that answer is what is timed). Prints one line per
label: `label status n p50 p95 p99 max (milliseconds) ratio first`, and exits 1 when a page answered an error (>= 400).
`first` is the page's first request in the run, timed apart and not among the n (the server's caches are cold
for it: the console keeps chart results for 5 minutes). A label starting with `anon-` is requested without the session cookie (the login page as a visitor sees it). A
page gets at most PAGE_SECONDS (default 30) of timed requests, so a slow page ends the run in bounded time: `n` says
how many were timed; a request that takes more than 60 s counts as `timeout` and ends that page.
"""

import http.client
import os
import re
import socket
import statistics
import sys
import time
import urllib.parse


def percentile(sorted_values, fraction):
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, int(round(fraction * (len(sorted_values) - 1)))))
    return sorted_values[index]


class Client:
    def __init__(self, base):
        parts = urllib.parse.urlsplit(base)
        self.host, self.port = parts.hostname, parts.port
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        self.cookies = {}

    def reconnect(self):
        self.connection.close()
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=60)

    def request(self, method, path, body=None, anonymous=False):
        headers = {"Accept": "text/html", "Connection": "keep-alive"}
        if self.cookies and not anonymous:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in range(2):
            try:
                started = time.perf_counter()
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
                elapsed = time.perf_counter() - started
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed an idle keep-alive connection: reconnect once, untimed.
                self.reconnect()
                if attempt:
                    raise
        if anonymous:
            return response.status, data, elapsed
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response.status, data, elapsed


def sign_in(client, user, password):
    status, page, _ = client.request("GET", "/console/login")
    if status != 200:
        sys.exit(f"GET /console/login answered {status}: is CONSOLE=on?")
    html = page.decode("utf-8", "replace")
    form = re.search(r'<form[^>]*id="login-form".*?</form>', html, re.S)
    fields = {}
    for tag in re.findall(r"<input[^>]*>", form.group(0) if form else html):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and re.search(r'type="hidden"', tag):
            fields[name.group(1)] = value.group(1) if value else ""
    fields.update({"username": user, "password": password})
    status, _, _ = client.request("POST", "/console/login", urllib.parse.urlencode(fields))
    if status not in (302, 303):
        sys.exit(f"signing in as {user} answered {status}")


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    base, user, password = sys.argv[1:4]
    requests, warmup = int(sys.argv[4]), int(sys.argv[5])
    pages = [argument.split("=", 1) for argument in sys.argv[6:]]
    client = Client(base)
    sign_in(client, user, password)
    budget = float(os.environ.get("PAGE_SECONDS", "30"))
    results = []
    failed = False
    for label, path in pages:
        anonymous = label.startswith("anon-")
        statuses = set()
        timings = []
        first = None
        try:
            # The page's first request in this run, timed on its own: anything the server caches is cold here.
            status, _, elapsed = client.request("GET", path, anonymous=anonymous)
            statuses.add(status)
            first = elapsed * 1000
            for _ in range(max(0, warmup - 1)):
                client.request("GET", path, anonymous=anonymous)
            started = time.monotonic()
            for _ in range(requests):
                status, _, elapsed = client.request("GET", path, anonymous=anonymous)
                statuses.add(status)
                timings.append(elapsed * 1000)
                if time.monotonic() - started > budget:
                    break
        except (socket.timeout, TimeoutError):
            statuses.add("timeout")
            client.reconnect()
        timings.sort()
        failed |= any(status == "timeout" or status >= 400 for status in statuses)
        results.append((label, path, sorted(statuses, key=str), timings, first))
    baseline = next((statistics.median(t) for label, _, _, t, _ in results if label == "baseline" and t), None)
    print(f"{'page':<28} {'status':>7} {'n':>4} {'p50':>9} {'p95':>9} {'p99':>9} {'max':>9} {'p50/baseline':>13} {'first':>9}  path")
    for label, path, statuses, timings, first in results:
        cold = f"{first:9.2f}" if first is not None else f"{'-':>9}"
        if not timings:
            print(f"{label:<28} {'/'.join(map(str, statuses)):>7} {0:>4} {'-':>9} {'-':>9} {'-':>9} {'-':>9} {'-':>13} {cold}  {path}")
            continue
        p50 = statistics.median(timings)
        ratio = f"{p50 / baseline:.1f}x" if baseline else "-"
        print(f"{label:<28} {'/'.join(map(str, statuses)):>7} {len(timings):>4} {p50:9.2f} {percentile(timings, 0.95):9.2f} "
              f"{percentile(timings, 0.99):9.2f} {timings[-1]:9.2f} {ratio:>13} {cold}  {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
