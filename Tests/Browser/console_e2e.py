#!/usr/bin/env python3
"""The web console end to end, in a real headless Chromium (Debian's), driven by Selenium.

Run by Tests/StoreLedgerTests/Console/ConsoleBrowserTests.swift, which sets up what this script reads in its
fixture file: a throwaway database, a real `storeledger serve` with CONSOLE=on on a loopback admin port, console
users made with `storeledger console-user create`, simulated notifications, rejected events, and a stopped worker
(so a requeued event stays where the requeue put it). This script only drives the browser and checks what a
person would see; it never touches the database.

    console_e2e.py FIXTURE.json [--screenshots DIR] [--artifacts DIR]

FIXTURE.json (written by the Swift test):
    base_url            the admin listener, e.g. http://127.0.0.1:41234
    operator, viewer    {"name": ..., "password": ...}
    api_key             an API key that logs in as a viewer (optional)
    customer            {"original_transaction_id", "app_account_token", "user_id", "entitled" (bool),
                         "timeline": ["SUBSCRIBED/INITIAL_BUY", "DID_RENEW", ...] in signing order}
    requeue_event       {"id", "raw_body", "reason"}  a rejected event the operator requeues, with this reason
    forge_event         {"id"}              a rejected event the viewer tries to requeue by a forged POST
    chromium, chromedriver   the binaries (default /usr/bin/chromium, /usr/bin/chromedriver)

--screenshots DIR saves PNGs of the main pages (1366x900) into DIR as it goes.
--artifacts DIR keeps, on failure, a screenshot and the page source of where it failed (default: a temp folder).

Exit status 0 when every check passed, 1 when one failed (its name, the page and why are printed), 2 for usage.
Every process it starts (chromedriver, Chromium) is stopped before it exits, also on failure and on SIGTERM.
"""

import argparse
import csv
import io
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

# Selenium must never fetch a driver or a browser: the binaries come from Debian's packages.
os.environ["SE_OFFLINE"] = "true"

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, TimeoutException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

WINDOW = (1366, 900)
WAIT_SECONDS = 15
CHART_NAMES = ["active-subscriptions", "mrr", "churn", "refunds", "trial-conversion", "new-vs-renewing"]


class CheckFailed(Exception):
    """A check that did not hold."""


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def http(method, url, cookie=None, data=None):
    """One request outside the browser (no redirects followed): (status, headers, body)."""
    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, method=method, data=data)
    if cookie:
        request.add_header("Cookie", cookie)
    if data is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with opener.open(request, timeout=15) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


class Console:
    """The browser session and the checks, step by step."""

    def __init__(self, fixture, screenshots, artifacts):
        self.fixture = fixture
        self.base = fixture["base_url"].rstrip("/")
        self.origin = urllib.parse.urlsplit(self.base)
        self.screenshots = screenshots
        self.artifacts = artifacts
        self.step = "start"
        self.passed = []
        self.requests = []  # every request the page made: (url, method)
        self.responses = {}  # (method, url) -> statuses in arrival order
        self.methods = {}  # requestId -> method
        self.profile = tempfile.mkdtemp(prefix="storeledger-chromium-")
        self.downloads = tempfile.mkdtemp(prefix="storeledger-downloads-")
        self.driver = None
        self.service = None

    # --- browser lifecycle -------------------------------------------------------------------------------------

    def start(self):
        options = webdriver.ChromeOptions()
        options.binary_location = self.fixture.get("chromium", "/usr/bin/chromium")
        for argument in [
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
            f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--user-data-dir={self.profile}",
            # Nothing but the page's own requests: no update checks, sync, field trials or safe browsing.
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--no-first-run", "--disable-domain-reliability",
            "--disable-client-side-phishing-detection", "--metrics-recording-only", "--no-pings",
            "--disable-features=Translate,OptimizationHints,MediaRouter",
            "--hide-scrollbars", "--force-device-scale-factor=1", "--lang=en-US",
        ]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        options.add_experimental_option("perfLoggingPrefs", {"enableNetwork": True, "enablePage": False})
        options.add_experimental_option("prefs", {
            "download.default_directory": self.downloads,
            "download.prompt_for_download": False,
            "safebrowsing.enabled": False,
        })
        self.service = Service(executable_path=self.fixture.get("chromedriver", "/usr/bin/chromedriver"),
                               log_output=os.path.join(self.artifacts, "chromedriver.log"))
        self.driver = webdriver.Chrome(service=self.service, options=options)
        self.driver.set_window_size(*WINDOW)
        # The page itself gets exactly WINDOW (a headless window's frame would take some of it).
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False})
        self.driver.set_page_load_timeout(30)
        self.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {
            "behavior": "allow", "downloadPath": self.downloads, "eventsEnabled": True})

    def stop(self):
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception:  # noqa: BLE001 - quitting must never hide the real failure
                pass
            self.driver = None
        if self.service is not None:
            try:
                self.service.stop()
            except Exception:  # noqa: BLE001
                pass
            process = getattr(self.service, "process", None)
            if process is not None and process.poll() is None:
                process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
        shutil.rmtree(self.downloads, ignore_errors=True)

    # --- helpers -----------------------------------------------------------------------------------------------

    def url(self, path):
        return self.base + path

    def path(self):
        return urllib.parse.urlsplit(self.driver.current_url).path

    def go(self, path):
        self.driver.get(self.url(path))
        self.drain_log()

    def wait(self, condition, message, seconds=WAIT_SECONDS):
        try:
            return WebDriverWait(self.driver, seconds).until(lambda driver: condition())
        except TimeoutException:
            raise CheckFailed(message) from None

    def one(self, selector, within=None):
        try:
            return (within or self.driver).find_element(By.CSS_SELECTOR, selector)
        except NoSuchElementException:
            raise CheckFailed(f"no element matches {selector!r} on {self.path()}") from None

    def all(self, selector, within=None):
        return (within or self.driver).find_elements(By.CSS_SELECTOR, selector)

    def present(self, selector, within=None):
        return len(self.all(selector, within)) > 0

    def text(self, selector, within=None):
        return self.one(selector, within).get_attribute("textContent").strip()

    def shot(self, name):
        if self.screenshots:
            os.makedirs(self.screenshots, exist_ok=True)
            self.driver.execute_script("window.scrollTo(0, 0)")
            self.driver.save_screenshot(os.path.join(self.screenshots, f"{name}.png"))

    def session_cookie_header(self):
        return "; ".join(f"{cookie['name']}={cookie['value']}" for cookie in self.driver.get_cookies())

    def drain_log(self):
        """Reads Chrome's performance log: every request the page made and every response it got."""
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            method, params = message.get("method"), message.get("params", {})
            if method == "Network.requestWillBeSent":
                request = params.get("request", {})
                redirect = params.get("redirectResponse")
                if redirect:  # the previous hop of this request answered with a redirect
                    key = (self.methods.get(params.get("requestId"), "GET"), redirect.get("url", ""))
                    self.responses.setdefault(key, []).append(redirect.get("status"))
                self.requests.append((request.get("url", ""), request.get("method", ""), params.get("documentURL", "")))
                self.methods[params.get("requestId")] = request.get("method", "")
            elif method == "Network.responseReceived":
                response = params.get("response", {})
                key = (self.methods.get(params.get("requestId"), "GET"), response.get("url", ""))
                self.responses.setdefault(key, []).append(response.get("status"))

    def forget(self, url, method="POST"):
        """Drops what was seen for `method url`, before making that request again."""
        self.drain_log()
        self.responses.pop((method, url), None)

    def wait_for_status(self, url, message, method="POST"):
        """The status of the first `method url` response since forget(url)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            self.drain_log()
            seen = self.responses.get((method, url))
            if seen:
                return seen[0]
            time.sleep(0.1)
        raise CheckFailed(message)

    def signed_in_as(self, name, role):
        who = self.text("#signed-in-as")
        check(name in who and role in who, f"#signed-in-as says {who!r}, expected {name!r} and {role!r}")

    def common_layout(self):
        self.one("main#content")
        nav = self.one("nav#console-nav")
        for href in ["/console/customers", "/console/queue", "/console/webhooks", "/console/charts"]:
            check(self.present(f'a[href="{href}"]', nav), f"the nav has no link to {href} on {self.path()}")
        self.one("form#logout-form")

    def submit_form(self, form):
        form.find_element(By.CSS_SELECTOR, "button[type=submit], input[type=submit]").click()

    def inject_post(self, action, fields):
        """Posts a form the server never rendered (a forgery), from the page: CSP allows form-action 'self'."""
        self.driver.execute_script(
            """
            const [action, fields] = arguments;
            const form = document.createElement('form');
            form.method = 'POST'; form.action = action;
            for (const [name, value] of Object.entries(fields)) {
                const input = document.createElement('input');
                input.type = 'hidden'; input.name = name; input.value = value;
                form.appendChild(input);
            }
            document.body.appendChild(form);
            HTMLFormElement.prototype.submit.call(form);
            """,
            action, fields,
        )

    # --- the steps ---------------------------------------------------------------------------------------------

    def run(self, name, body):
        self.step = name
        body()
        self.passed.append(name)
        print(f"ok  {name}", flush=True)

    def unauthenticated_pages_redirect_to_login(self):
        event = self.fixture["requeue_event"]["id"]
        for path in ["/console", "/console/customers", f"/console/customers?q={self.customer['original_transaction_id']}",
                     "/console/queue", f"/console/events/{event}", "/console/webhooks", "/console/charts",
                     "/console/charts/mrr.csv"]:
            status, headers, _ = http("GET", self.url(path))
            location = headers.get("Location", "")
            check(status == 303 and urllib.parse.urlsplit(location).path == "/console/login",
                  f"GET {path} without a session answered {status} Location {location!r}, expected 303 to /console/login")
        status, headers, _ = http("POST", self.url(f"/console/events/{event}/requeue"),
                                  data=b"reason=no+session&csrf_token=x")
        check(status in (303, 403), f"a POST without a session answered {status}")
        # The same in the browser: a protected page lands on the login form.
        self.go("/console/queue")
        self.wait(lambda: self.path() == "/console/login", f"the browser was not sent to /console/login but to {self.path()}")
        self.one("form#login-form")

    def security_headers(self):
        for path, cookie in [("/console/login", None), ("/console/queue", self.session_cookie_header()),
                             ("/console/charts", self.session_cookie_header())]:
            status, headers, _ = http("GET", self.url(path), cookie=cookie)
            check(status == 200, f"GET {path} answered {status}")
            csp = headers.get("Content-Security-Policy", "")
            check(csp, f"GET {path} ({status}) has no Content-Security-Policy")
            directives = {part.strip().split(" ")[0]: part.strip() for part in csp.split(";") if part.strip()}
            check(directives.get("default-src") == "default-src 'none'", f"CSP of {path} lacks default-src 'none': {csp}")
            check("frame-ancestors" in directives and "'none'" in directives["frame-ancestors"],
                  f"CSP of {path} lacks frame-ancestors 'none': {csp}")
            check("form-action" in directives and "'self'" in directives["form-action"],
                  f"CSP of {path} lacks form-action 'self': {csp}")
            for directive, value in directives.items():
                check(not re.search(r"https?:|\*|'unsafe-inline'|'unsafe-eval'", value),
                      f"CSP of {path} allows more than 'self': {value}")
            check(headers.get("X-Content-Type-Options", "").lower() == "nosniff", f"{path}: X-Content-Type-Options is not nosniff")
            check(headers.get("Referrer-Policy", "").lower() == "no-referrer", f"{path}: Referrer-Policy is not no-referrer")
            check(headers.get("Content-Type", "").lower().replace(" ", "") == "text/html;charset=utf-8",
                  f"{path}: Content-Type is {headers.get('Content-Type')!r}")

    def failed_login_says_so(self):
        self.go("/console/login")
        form = self.one("form#login-form")
        self.one("input[name=username]", form).send_keys(self.fixture["operator"]["name"])
        self.one("input[name=password]", form).send_keys("not the password")
        self.forget(self.url("/console/login"))
        self.submit_form(form)
        self.wait(lambda: self.present("#login-error"), "a wrong password did not show #login-error")
        status = self.wait_for_status(self.url("/console/login"), "no response to the login POST was logged")
        check(status == 401, f"a failed login answered {status}, expected 401")
        check(not self.present("#signed-in-as"), "a failed login shows someone signed in")

    def login_with_the_keyboard_only(self):
        operator = self.fixture["operator"]
        self.go("/console/login")
        self.shot("login")
        actions = ActionChains(self.driver)
        # Tab from the top of the page (whatever autofocus chose is blurred first) until the username field of the
        # login form has the focus.
        self.driver.execute_script("document.activeElement && document.activeElement.blur()")
        for _ in range(30):
            active = self.driver.switch_to.active_element
            if active.get_attribute("name") == "username" and self.driver.execute_script(
                    "return document.activeElement.closest('form#login-form') !== null"):
                break
            actions.send_keys(Keys.TAB).perform()
        else:
            raise CheckFailed("Tab never reached input[name=username] in form#login-form")
        ActionChains(self.driver).send_keys(operator["name"]).perform()
        ActionChains(self.driver).send_keys(Keys.TAB).perform()
        check(self.driver.switch_to.active_element.get_attribute("name") == "password",
              "Tab from the username does not reach the password field")
        ActionChains(self.driver).send_keys(operator["password"]).send_keys(Keys.ENTER).perform()
        self.wait(lambda: self.path() != "/console/login" and self.present("#signed-in-as"),
                  f"Enter did not sign in (still on {self.path()})")
        self.signed_in_as(operator["name"], "operator")
        self.common_layout()

    def session_cookie_is_httponly_and_strict(self):
        cookies = self.driver.get_cookies()
        console = [cookie for cookie in cookies if cookie.get("path") == "/console"]
        check(console, f"no cookie with Path=/console after signing in: {cookies}")
        for cookie in console:
            check(cookie.get("httpOnly") is True, f"cookie {cookie['name']} is not HttpOnly")
            check(cookie.get("sameSite") == "Strict", f"cookie {cookie['name']} has SameSite={cookie.get('sameSite')}")
        # HttpOnly: the page's own scripts cannot read it.
        visible = self.driver.execute_script("return document.cookie")
        for cookie in console:
            check(cookie["name"] not in visible, f"document.cookie exposes {cookie['name']}")
        self.operator_cookie = self.session_cookie_header()

    def find_customer(self, query, label):
        """Searches the customer form; returns once the customer page of our subscription is shown."""
        otid = self.customer["original_transaction_id"]
        self.one('nav#console-nav a[href="/console/customers"]').click()
        self.wait(lambda: self.path() == "/console/customers", "the nav link did not open /console/customers")
        form = self.one("form#customer-search")
        field = self.one("input[name=q]", form)
        field.clear()
        field.send_keys(query)
        field.send_keys(Keys.ENTER)
        self.wait(lambda: self.path().startswith("/console/customers/") or self.present("table#customer-results")
                  or self.present("#no-results"), f"searching by {label} showed nothing")
        check(not self.present("#no-results"), f"searching by {label} ({query}) found no customer")
        if self.path().startswith("/console/customers/"):
            check(self.subscription_section(otid) is not None,
                  f"searching by {label} opened {self.path()}, which has no subscription {otid}")
            return
        rows = self.all("table#customer-results tr.customer-result")
        check(rows and all(self.present("a", row) for row in rows),
              f"table#customer-results for {label} has no tr.customer-result, or one without a link")
        # The row that names our subscription first, then the others.
        rows.sort(key=lambda row: otid not in row.get_attribute("textContent"))
        links = [self.one("a", row).get_attribute("href") for row in rows]
        for link in links[:50]:
            self.driver.get(link)
            if self.subscription_section(otid) is not None:
                return
        raise CheckFailed(f"none of the {len(links)} customers found by {label} has subscription {otid}")

    def subscription_section(self, otid):
        for section in self.all("section.subscription"):
            for field in self.all("[data-field=original-transaction-id]", section):
                if otid in field.get_attribute("textContent"):
                    return section
        return None

    def customer_lookup(self):
        self.find_customer(self.customer["original_transaction_id"], "originalTransactionId")
        if self.customer.get("app_account_token"):
            self.find_customer(self.customer["app_account_token"], "appAccountToken")
        if self.customer.get("user_id"):
            self.find_customer(self.customer["user_id"], "user id")

    def timeline(self):
        otid = self.customer["original_transaction_id"]
        self.go(f"/console/customers/{otid}")
        section = self.subscription_section(otid)
        check(section is not None, f"/console/customers/{otid} has no section.subscription for it")
        state = self.text("[data-field=state]", section)
        expected = "not entitled" if not self.customer["entitled"] else "entitled"
        check(expected in state and (self.customer["entitled"] is False or "not entitled" not in state),
              f"state says {state!r}, expected {expected!r}")
        check(self.text("[data-field=product]", section), "the subscription shows no product")
        entries = self.all("ol.timeline li.timeline-entry", section)
        check(entries, "the subscription has no timeline entries")
        shown, dates = [], []
        for entry in entries:
            kind = self.text("[data-field=type]", entry)
            subtype = self.text("[data-field=subtype]", entry) if self.present("[data-field=subtype]", entry) else ""
            shown.append(f"{kind}/{subtype}" if subtype and subtype not in ("-", "—") else kind)
            date = self.one("[data-field=signed-date]", entry)
            dates.append(signed_instant(date))
            check(self.present("a.raw-event", entry), f"timeline entry {kind} has no a.raw-event")
        expected_types = self.customer["timeline"]
        notifications = [label for label in shown if label.split("/")[0] in {t.split("/")[0] for t in expected_types}]
        check(notifications == expected_types, f"timeline shows {shown}, expected the notifications {expected_types} in signed order")
        known = [date for date in dates if date is not None]
        check(len(known) == len(dates), f"signed dates not readable: {[self.text('[data-field=signed-date]', e) for e in entries]}")
        check(known == sorted(known), f"timeline entries are not in signed order: {known}")
        self.shot("customer")
        # The raw-event link opens the event as stored.
        link = self.one("a.raw-event", entries[0])
        href = urllib.parse.urlsplit(link.get_attribute("href")).path
        check(re.fullmatch(r"/console/events/\d+", href), f"a.raw-event links to {href}")
        link.click()
        self.wait(lambda: self.path() == href, f"the raw-event link did not open {href}")
        raw = self.text("pre#raw-body")
        check("signedPayload" in raw, f"the raw event of the first entry does not show the stored body: {raw[:200]!r}")
        check("done" in self.text("#event-state"), f"the first entry's event is {self.text('#event-state')!r}, not done")

    def charts(self):
        self.one('nav#console-nav a[href="/console/charts"]').click()
        self.wait(lambda: self.path() == "/console/charts", "the nav link did not open /console/charts")
        form = self.one("form#chart-filters")
        for name in ["from", "to", "app", "environment", "product"]:
            check(self.present(f"[name={name}]", form), f"form#chart-filters has no field {name}")
        # Production by default (Sandbox purchases are not revenue); this ledger's purchases are Sandbox, so the
        # charts are asked for every environment through the form.
        environment = self.one("input[name=environment]", form)
        check(environment.get_attribute("value") == "Production",
              f"the environment field says {environment.get_attribute('value')!r}, not the default Production")
        environment.clear()
        environment.send_keys("all")
        self.one("button[type=submit]", form).click()
        self.wait(lambda: "environment=all" in self.driver.current_url, "submitting environment=all did not reload the charts")
        for name in CHART_NAMES:
            check(self.present(f'figure.chart[data-chart="{name}"]'), f"no figure.chart[data-chart={name}]")
        self.shot("charts")
        figure = self.one('figure.chart[data-chart="active-subscriptions"]')
        marks = self.all("svg [data-value]", figure)
        check(marks, "the active-subscriptions chart has no svg mark with data-value")
        values = [float(mark.get_attribute("data-value")) for mark in marks]
        check(any(value > 0 for value in values), f"the active-subscriptions chart has no data: {values}")
        # Its table shows the same numbers.
        details = self.one("details.chart-table", figure)
        if details.get_attribute("open") is None:
            self.one("summary", details).click()
        cells = [cell.get_attribute("textContent") for cell in self.all("td, th", self.one("table", details))]
        table_numbers = [number for cell in cells for number in numbers_in(cell)]
        missing = [value for value in values if not contains_number(table_numbers, value)]
        check(not missing, f"the chart's table lacks the values {missing} (table numbers {table_numbers})")
        # Its CSV link downloads the same numbers.
        link = self.one("a.chart-csv", figure)
        href = link.get_attribute("href")
        check(urllib.parse.urlsplit(href).path == "/console/charts/active-subscriptions.csv", f"a.chart-csv links to {href}")
        status, headers, body = http("GET", href, cookie=self.session_cookie_header())
        check(status == 200, f"GET {href} answered {status}")
        check(headers.get("Content-Type", "").lower().replace(" ", "") == "text/csv;charset=utf-8",
              f"the CSV's Content-Type is {headers.get('Content-Type')!r}")
        check('filename="active-subscriptions.csv"' in headers.get("Content-Disposition", "")
              and "attachment" in headers.get("Content-Disposition", ""),
              f"the CSV's Content-Disposition is {headers.get('Content-Disposition')!r}")
        link.click()
        downloaded = os.path.join(self.downloads, "active-subscriptions.csv")
        self.wait(lambda: os.path.exists(downloaded) and not os.path.exists(downloaded + ".crdownload"),
                  "clicking a.chart-csv downloaded no active-subscriptions.csv")
        with open(downloaded, encoding="utf-8") as handle:
            rows = list(csv.reader(io.StringIO(handle.read())))
        check(len(rows) >= 2, f"the CSV has no data rows: {rows}")
        # One row per data point (month), its first column the label; every other cell one mark of the chart.
        csv_values = [number for row in rows[1:] for cell in row[1:] for number in numbers_in(cell)]
        check(sorted(round(v, 2) for v in csv_values) == sorted(round(v, 2) for v in values),
              f"the downloaded CSV's values {csv_values} are not the chart's marks {values}")
        table_rows = self.all("tbody tr", details) or self.all("tr", details)[1:]
        check(len(rows) - 1 == len(table_rows), f"the CSV has {len(rows) - 1} data rows, the chart's table {len(table_rows)}")
        # Every chart says when its numbers were computed, and the MRR legend names currencies only (a month without
        # subscriptions is a 0 of its currency, not a series of its own).
        for name in CHART_NAMES:
            check("as of" in self.text(f'figure.chart[data-chart="{name}"] figcaption'), f"the {name} chart does not say as of when")
        mrr = self.one('figure.chart[data-chart="mrr"]')
        series = {mark.get_attribute("data-series") for mark in self.all("svg [data-value]", mrr)}
        check(series and all(re.fullmatch(r"[A-Z]{3}|MRR", name or "") for name in series), f"the MRR chart's series are {series}")

    def queue(self):
        self.one('nav#console-nav a[href="/console/queue"]').click()
        self.wait(lambda: self.path() == "/console/queue", "the nav link did not open /console/queue")
        depth = self.one("#queue-depth")
        rejected = int(self.text('tr[data-state="rejected"] td.count', depth).replace(",", ""))
        done = int(self.text('tr[data-state="done"] td.count', depth).replace(",", ""))
        check(rejected >= 2, f"the queue shows {rejected} rejected events, the fixture has at least 2")
        check(done >= len(self.customer["timeline"]), f"the queue shows {done} done events")
        self.one("#oldest-pending")
        self.one("#throughput")
        check(self.all("table#rejections tr"), "table#rejections is empty")
        event = self.fixture["requeue_event"]["id"]
        row = self.one(f'table#problem-events tr.problem-event[data-event-id="{event}"]')
        self.shot("queue")
        self.one(f'a[href="/console/events/{event}"]', row).click()
        self.wait(lambda: self.path() == f"/console/events/{event}", f"the problem event's link did not open event {event}")

    def inspect_and_requeue(self):
        event = self.fixture["requeue_event"]
        path = f"/console/events/{event['id']}"
        if self.path() != path:
            self.go(path)
        check("rejected" in self.text("#event-state"), f"event {event['id']} is {self.text('#event-state')!r}, not rejected")
        raw = self.one("pre#raw-body").get_attribute("textContent")
        check(raw == event["raw_body"], f"pre#raw-body differs from the stored body:\n{raw!r}\n{event['raw_body']!r}")
        for selector in ["#decoded", "#verification", "#attempts", "#audit"]:
            self.one(selector)
        check(self.text("#verification"), "#verification is empty for a rejected event")
        form = self.one("form#requeue-form")
        self.one("form#replay-form")
        check(self.one("input[name=csrf_token]", form).get_attribute("value"), "the requeue form has no CSRF token")
        reason_field = self.one("textarea[name=reason]", form)
        check(reason_field.get_attribute("required") is not None, "the reason is not required")
        self.shot("event")
        reason = event.get("reason") or f"browser e2e: trust fixed, try again ({int(time.time())})"
        reason_field.send_keys(reason)
        self.submit_form(form)
        self.wait(lambda: self.path() == path and self.present("#flash"), "requeue did not come back to the event with #flash")
        check("requeued" in self.text("#flash"), f"#flash says {self.text('#flash')!r}")
        state = self.text("#event-state")
        check("rejected" not in state, f"after the requeue the event is still {state!r}")
        operator = f"console:{self.fixture['operator']['name']}"
        entries = [entry.get_attribute("textContent") for entry in self.all("#audit tr.audit-entry")]
        check(any(operator in entry and reason in entry and "requeue" in entry for entry in entries),
              f"no audit entry with {operator!r}, requeue and the reason: {entries}")
        self.fixture["requeue_reason"] = reason

    def post_without_csrf_is_refused(self):
        event = self.fixture["forge_event"]["id"]
        self.go(f"/console/events/{event}")
        check("rejected" in self.text("#event-state"), f"event {event} is not rejected before the check")
        action = self.url(f"/console/events/{event}/requeue")
        self.forget(action)
        self.inject_post(action, {"reason": "no csrf token"})
        status = self.wait_for_status(action, "no response to the POST without a CSRF token")
        check(status == 403, f"an operator's POST without csrf_token answered {status}, expected 403")
        self.inject_post_after_load(action, {"reason": "wrong csrf token", "csrf_token": "0" * 43}, "a wrong CSRF token")
        self.go(f"/console/events/{event}")
        check("rejected" in self.text("#event-state"), "a POST without a valid CSRF token changed the event")

    def inject_post_after_load(self, action, fields, label):
        self.go("/console/queue")
        self.forget(action)
        self.inject_post(action, fields)
        status = self.wait_for_status(action, f"no response to the POST with {label}")
        check(status == 403, f"a POST with {label} answered {status}, expected 403")

    def webhooks(self):
        self.one('nav#console-nav a[href="/console/webhooks"]').click()
        self.wait(lambda: self.path() == "/console/webhooks", "the nav link did not open /console/webhooks")
        self.one("table#webhook-endpoints")
        self.one("table#webhook-deliveries")
        for row in self.all("table#webhook-deliveries tr.delivery"):
            check(self.text("[data-field=status]", row), "a delivery shows no status")
        # At 1366 px the deliveries stay inside the page's column: the table, or the box that scrolls it, ends
        # within main's content box, and the page itself never scrolls sideways.
        layout = self.driver.execute_script("""
            const table = document.querySelector('table#webhook-deliveries');
            const main = document.querySelector('main#content');
            let box = table;
            for (let node = table.parentElement; node && node !== main; node = node.parentElement) {
                if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(node).overflowX)) { box = node; break; }
            }
            const limit = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight);
            return {over: box.getBoundingClientRect().right - limit,
                    page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
                    width: window.innerWidth};
        """)
        check(layout["over"] <= 1, f"the deliveries table sticks out of the page's column by {layout['over']:.0f} px at {layout['width']} px")
        check(layout["page"] <= 0, f"the webhooks page scrolls sideways by {layout['page']} px at {layout['width']} px")
        self.shot("webhooks")

    def logout(self):
        cookie = self.session_cookie_header()
        self.submit_form(self.one("form#logout-form"))
        self.wait(lambda: self.path() == "/console/login", "logging out did not land on /console/login")
        self.go("/console/queue")
        self.wait(lambda: self.path() == "/console/login", "after logout /console/queue did not redirect to login")
        # The old cookie is dead on the server too, not only forgotten by the browser.
        status, headers, _ = http("GET", self.url("/console/queue"), cookie=cookie)
        check(status == 303, f"the session cookie still works after logout ({status})")

    def login(self, name, password):
        self.go("/console/login")
        form = self.one("form#login-form")
        self.one("input[name=username]", form).send_keys(name)
        self.one("input[name=password]", form).send_keys(password)
        self.submit_form(form)
        self.wait(lambda: self.present("#signed-in-as"), f"{name} could not sign in (on {self.path()})")

    def viewer_cannot_requeue(self):
        viewer = self.fixture["viewer"]
        self.login(viewer["name"], viewer["password"])
        self.signed_in_as(viewer["name"], "viewer")
        event = self.fixture["forge_event"]["id"]
        self.go(f"/console/events/{event}")
        check("rejected" in self.text("#event-state"), f"event {event} is not rejected before the viewer's attempt")
        check(not self.present("form#requeue-form"), "a viewer sees the requeue form")
        check(not self.present("form#replay-form"), "a viewer sees the replay form")
        token = self.one("form#logout-form input[name=csrf_token]").get_attribute("value")
        check(token, "the viewer's logout form carries no csrf_token")
        for operation in ["requeue", "replay"]:
            action = self.url(f"/console/events/{event}/{operation}")
            self.forget(action)
            self.inject_post(action, {"csrf_token": token, "reason": "forged by a viewer"})
            status = self.wait_for_status(action, f"no response to the viewer's forged {operation}")
            check(status == 403, f"a viewer's {operation} POST with a valid CSRF token answered {status}, expected 403")
            self.go(f"/console/events/{event}")
        check("rejected" in self.text("#event-state"), "the viewer's forged POST changed the event")
        entries = [entry.get_attribute("textContent") for entry in self.all("#audit tr.audit-entry")]
        check(not any("forged" in entry for entry in entries), f"the viewer's forgery was recorded as an action: {entries}")
        self.submit_form(self.one("form#logout-form"))
        self.wait(lambda: self.path() == "/console/login", "the viewer's logout did not land on /console/login")

    def api_key_logs_in_as_viewer(self):
        key = self.fixture.get("api_key")
        if not key:
            return
        self.go("/console/login")
        form = self.one("form#api-key-form")
        self.one("input[name=api_key]", form).send_keys(key)
        self.submit_form(form)
        self.wait(lambda: self.present("#signed-in-as"), "the API key did not sign in")
        check("viewer" in self.text("#signed-in-as"), f"an API key signed in as {self.text('#signed-in-as')!r}")
        self.submit_form(self.one("form#logout-form"))
        self.wait(lambda: self.path() == "/console/login", "logging out did not land on /console/login")

    def no_request_left_the_origin(self):
        self.drain_log()
        foreign = []
        ours = 0
        for url, method, document in self.requests:
            parts = urllib.parse.urlsplit(url)
            same = (parts.scheme, parts.netloc) == (self.origin.scheme, self.origin.netloc)
            ours += same
            from_console = document.startswith(self.base + "/")
            # Any network request to another host fails, whoever made it; from a console page, anything not its own
            # origin does (Chromium's own chrome:// pages, like the first blank tab, are not the console's).
            if not same and (parts.scheme in ("http", "https", "ws", "wss") or (from_console and parts.scheme != "data")):
                foreign.append(f"{method} {url} (from {document or '?'})")
        check(ours, "the performance log recorded no request to the console at all")
        check(not foreign, "the pages made requests to another origin:\n  " + "\n  ".join(sorted(set(foreign))))
        print(f"    {ours} requests to {self.origin.netloc}, none elsewhere", flush=True)

    def fail_artifacts(self):
        try:
            os.makedirs(self.artifacts, exist_ok=True)
            self.driver.save_screenshot(os.path.join(self.artifacts, "failure.png"))
            with open(os.path.join(self.artifacts, "failure.html"), "w", encoding="utf-8") as handle:
                handle.write(self.driver.page_source)
            return self.driver.current_url, self.driver.find_element(By.TAG_NAME, "body").text[:1500]
        except Exception as error:  # noqa: BLE001
            return "?", f"(could not read the page: {error})"

    def main(self):
        self.customer = self.fixture["customer"]
        steps = [
            ("unauthenticated pages redirect to the login", self.unauthenticated_pages_redirect_to_login),
            ("a wrong password shows #login-error with 401", self.failed_login_says_so),
            ("the operator signs in with the keyboard only (Tab, Enter)", self.login_with_the_keyboard_only),
            ("the session cookie is HttpOnly, SameSite=Strict, Path=/console", self.session_cookie_is_httponly_and_strict),
            ("CSP, nosniff, no-referrer and the HTML content type", self.security_headers),
            ("the customer is found by originalTransactionId, appAccountToken and user id", self.customer_lookup),
            ("its timeline: the notifications in signed order, state, a raw-event link that opens", self.timeline),
            ("a chart with data, its table and its CSV download agree", self.charts),
            ("the queue shows depth, rejections and the problem event", self.queue),
            ("the operator inspects the rejected event and requeues it with a reason", self.inspect_and_requeue),
            ("a POST without a valid CSRF token answers 403 and changes nothing", self.post_without_csrf_is_refused),
            ("webhook endpoints and deliveries", self.webhooks),
            ("logout ends the session on the server", self.logout),
            ("a viewer sees no forms and a forged POST answers 403", self.viewer_cannot_requeue),
            ("an API key signs in as a viewer", self.api_key_logs_in_as_viewer),
            ("no request went to another origin", self.no_request_left_the_origin),
        ]
        self.start()
        for name, body in steps:
            self.run(name, body)
        print(f"{len(self.passed)} passed, 0 failed", flush=True)


def signed_instant(element):
    """A signed date as a comparable number: from a datetime / data-value attribute, else the text."""
    for attribute in ["datetime", "data-value", "title"]:
        value = element.get_attribute(attribute)
        parsed = parse_instant(value) if value else None
        if parsed is not None:
            return parsed
    return parse_instant(element.get_attribute("textContent").strip())


def parse_instant(text):
    from datetime import datetime, timezone
    text = text.strip()
    if re.fullmatch(r"\d{12,14}", text):
        return int(text) / 1000
    candidate = text.replace("Z", "+00:00").replace(" UTC", "+00:00")
    for form in [candidate, candidate.replace(" ", "T", 1)]:
        try:
            instant = datetime.fromisoformat(form)
            if instant.tzinfo is None:
                instant = instant.replace(tzinfo=timezone.utc)
            return instant.timestamp()
        except ValueError:
            pass
    for pattern in ["%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%d %b %Y %H:%M:%S", "%b %d, %Y %H:%M:%S"]:
        try:
            return datetime.strptime(text, pattern).replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            pass
    return None


def numbers_in(text):
    """The numbers in one cell's text; a minus sign counts only where no digit precedes it (2026-10 is 2026 and 10)."""
    return [float(match.replace(",", "")) for match in re.findall(r"(?:(?<![\d.])-)?\d[\d,]*(?:\.\d+)?", text or "")]


def contains_number(numbers, value):
    return any(abs(number - value) <= max(0.005, abs(value) * 1e-6) for number in numbers)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fixture")
    parser.add_argument("--screenshots", metavar="DIR")
    parser.add_argument("--artifacts", metavar="DIR")
    arguments = parser.parse_args()
    with open(arguments.fixture, encoding="utf-8") as handle:
        fixture = json.load(handle)
    artifacts = arguments.artifacts or tempfile.mkdtemp(prefix="storeledger-browser-")
    os.makedirs(artifacts, exist_ok=True)
    console = Console(fixture, arguments.screenshots, artifacts)

    def terminate(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    try:
        console.main()
        return 0
    except CheckFailed as failure:
        url, page = console.fail_artifacts() if console.driver else ("?", "")
        print(f"FAIL {console.step}\n     {failure}\n     at {url}\n     artifacts in {artifacts}\n--- page text ---\n{page}",
              flush=True)
        print(f"{len(console.passed)} passed, 1 failed", flush=True)
        return 1
    except Exception:  # noqa: BLE001 - any other error is a failure of the step, with its traceback
        url, page = console.fail_artifacts() if console.driver else ("?", "")
        print(f"FAIL {console.step} (error)\n{traceback.format_exc()}     at {url}\n     artifacts in {artifacts}\n"
              f"--- page text ---\n{page}", flush=True)
        print(f"{len(console.passed)} passed, 1 failed", flush=True)
        return 1
    finally:
        console.stop()


if __name__ == "__main__":
    sys.exit(main())
