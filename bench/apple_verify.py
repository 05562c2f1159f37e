#!/usr/bin/env python3
"""Baseline for bench/verify: Apple's app-store-server-library (PyPI) verifying one notification in a loop.

usage: apple_verify.py ROOT.der NOTIFICATION.jws SECONDS [--mode offline|cached] [--not-strict]

One iteration does the work StoreLedger's verifyNotification does: verify_and_decode_notification on the
signedPayload, then (Apple's library does not descend by itself) verify_and_decode_signed_transaction and
verify_and_decode_renewal_info on data.signedTransactionInfo / data.signedRenewalInfo when present.

Modes:
  offline  SignedDataVerifier(enable_online_checks=False): the chain is validated at the payload's signedDate
           (the library's offline mode, the counterpart of ours). The library caches verified chains only when
           online checks are on, so every JWS pays a full OpenSSL chain build + verification.
  cached   The library's best case: enable_online_checks=True with its OCSP request replaced by a no-op
           (_ChainVerifier.check_ocsp_status), so after the warm-up every JWS hits its public-key cache. Validates
           at "now", so it needs a chain valid today (the minted one, not Apple's test vector). No network is used.

--not-strict clears OpenSSL's X509_STRICT flag on the library's trust store, exactly as Apple's own test suite
does for its test vectors ("We don't have authority identifiers on test certs": under OpenSSL 3 strict mode their
test leaf is rejected with "Missing Authority Key Identifier"). The minted chain has the identifiers and is
verified strictly. Everything else (chain build, OID checks, ECDSA) is unchanged.

Warms up once (and checks the decoded result), then runs sequential iterations until SECONDS have passed (at least 3 iterations); prints
`verifications/s: N` (notifications, each with its nested JWS, per second of this process's CPU time, as
`openssl speed` and `storeledger verify --benchmark` count) and the wall-clock rate.
"""

import argparse
import sys
import time

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, _ChainVerifier


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("jws")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--mode", choices=["offline", "cached"], default="offline")
    parser.add_argument("--not-strict", action="store_true")
    args = parser.parse_args()
    mode = args.mode
    with open(args.root, "rb") as f:
        root = f.read()
    with open(args.jws) as f:
        token = f.read().strip()

    online = mode == "cached"
    if online:
        _ChainVerifier.check_ocsp_status = lambda self, cert, issuer, root: None
    verifier = SignedDataVerifier(root_certificates=[root], enable_online_checks=online,
                                  environment=Environment.SANDBOX, bundle_id="com.example", app_apple_id=None)
    if args.not_strict:
        verifier._chain_verifier.enable_strict_checks = False

    def once():
        notification = verifier.verify_and_decode_notification(token)
        data = notification.data
        nested = 0
        if data is not None and data.signedTransactionInfo is not None:
            transaction = verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
            nested += 1 if transaction.transactionId else 0
        if data is not None and data.signedRenewalInfo is not None:
            renewal = verifier.verify_and_decode_renewal_info(data.signedRenewalInfo)
            nested += 1 if renewal.originalTransactionId else 0
        return notification, nested

    notification, nested = once()  # warm-up; raises VerificationException if the library rejects the data
    assert notification.notificationUUID, "decoded notification has no notificationUUID"
    print(f"warm-up: verified {notification.rawNotificationType} {notification.notificationUUID} "
          f"with {nested} nested JWS (mode {mode}{', not strict' if args.not_strict else ''})", file=sys.stderr)

    iterations = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while True:
        once()
        iterations += 1
        seconds = time.perf_counter() - start
        if seconds >= args.seconds and iterations >= 3:
            break
    cpu_seconds = time.process_time() - cpu_start
    print(f"iterations: {iterations}")
    print(f"seconds: {seconds:.6f} wall, {cpu_seconds:.6f} CPU")
    print(f"verifications/s: {iterations / cpu_seconds:.1f}")
    print(f"wall verifications/s: {iterations / seconds:.1f}")


if __name__ == "__main__":
    main()
