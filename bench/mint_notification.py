#!/usr/bin/env python3
"""Mint a realistic App Store Server Notification V2 for bench/verify.

Writes into OUT_DIR (first argument):
  root.der                 a throwaway P-256 root CA to trust
  notification.jws         a DID_RENEW signedPayload whose data carries a nested signedTransactionInfo and
                           signedRenewalInfo, all three ES256 JWS with x5c [leaf, intermediate, root]

The chain mirrors Apple's shape (and StoreLedgerTestSupport.TestPKI): root CA; intermediate CA (pathlen 0) with
Apple's WWDR marker 1.2.840.113635.100.6.2.1; leaf with the App Store signing marker 1.2.840.113635.100.6.11.1.
Marker values are DER NULL as in Apple's certificates. Every certificate is valid now, so both offline validation
at signedDate and validation at "now" succeed. Bundle id com.example, environment Sandbox, appAppleId 1234.
Needs only `cryptography`. Fresh random keys each run; no network.
"""

import base64
import datetime
import json
import os
import sys
import time
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

LEAF_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
INTERMEDIATE_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
DER_NULL = b"\x05\x00"
BUNDLE_ID = "com.example"
APP_APPLE_ID = 1234


def name(common_name):
    return x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "StoreLedger Bench"),
        x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
    ])


def certificate(subject, issuer, public_key, issuer_key, not_before, not_after, extensions):
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
    )
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(issuer_key, hashes.SHA256())


def mint_pki(now):
    root_key = ec.generate_private_key(ec.SECP256R1())
    intermediate_key = ec.generate_private_key(ec.SECP256R1())
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    root_ski = x509.SubjectKeyIdentifier.from_public_key(root_key.public_key())
    intermediate_ski = x509.SubjectKeyIdentifier.from_public_key(intermediate_key.public_key())
    ca_from, ca_until = now - datetime.timedelta(days=3650), now + datetime.timedelta(days=3650)
    ca_usage = x509.KeyUsage(False, False, False, False, False, True, True, False, False)
    root = certificate(name("StoreLedger Bench Root CA"), name("StoreLedger Bench Root CA"), root_key.public_key(),
                       root_key, ca_from, ca_until, [
                           (x509.BasicConstraints(ca=True, path_length=None), True),
                           (ca_usage, True),
                           (root_ski, False),
                       ])
    intermediate = certificate(name("StoreLedger Bench WWDR CA"), root.subject, intermediate_key.public_key(),
                               root_key, ca_from, ca_until, [
                                   (x509.BasicConstraints(ca=True, path_length=0), True),
                                   (ca_usage, True),
                                   (x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(root_ski), False),
                                   (intermediate_ski, False),
                                   (x509.UnrecognizedExtension(INTERMEDIATE_MARKER, DER_NULL), False),
                               ])
    leaf = certificate(name("StoreLedger Bench App Store Signing"), intermediate.subject, leaf_key.public_key(),
                       intermediate_key, now - datetime.timedelta(days=180), now + datetime.timedelta(days=365), [
                           (x509.BasicConstraints(ca=False, path_length=None), False),
                           (x509.KeyUsage(True, False, False, False, False, False, False, False, False), True),
                           (x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(intermediate_ski), False),
                           (x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key()), False),
                           (x509.UnrecognizedExtension(LEAF_MARKER, DER_NULL), False),
                       ])
    return root, intermediate, leaf, leaf_key


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_jws(payload, leaf_key, chain):
    x5c = [base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode() for cert in chain]
    header = b64url(json.dumps({"alg": "ES256", "x5c": x5c}, separators=(",", ":")).encode())
    body = b64url(json.dumps(payload, separators=(",", ":")).encode())
    signing_input = f"{header}.{body}".encode()
    r, s = decode_dss_signature(leaf_key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
    return f"{header}.{body}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    root, intermediate, leaf, leaf_key = mint_pki(now)
    chain = [leaf, intermediate, root]
    signed = int(time.time()) * 1000
    day = 86_400_000
    transaction = {
        "transactionId": "2000000812345678", "originalTransactionId": "2000000800000001",
        "webOrderLineItemId": "2000000077777777", "bundleId": BUNDLE_ID, "productId": "com.example.monthly",
        "subscriptionGroupIdentifier": "21345678", "purchaseDate": signed - 60_000,
        "originalPurchaseDate": signed - 90 * day, "expiresDate": signed - 60_000 + 30 * day, "quantity": 1,
        "type": "Auto-Renewable Subscription", "appAccountToken": str(uuid.uuid4()),
        "inAppOwnershipType": "PURCHASED", "signedDate": signed, "environment": "Sandbox",
        "transactionReason": "RENEWAL", "storefront": "USA", "storefrontId": "143441", "price": 9990,
        "currency": "USD", "appTransactionId": "704289572311463478",
    }
    renewal_info = {
        "originalTransactionId": "2000000800000001", "autoRenewProductId": "com.example.monthly",
        "productId": "com.example.monthly", "autoRenewStatus": 1, "signedDate": signed, "environment": "Sandbox",
        "recentSubscriptionStartDate": signed - 90 * day, "renewalDate": signed - 60_000 + 30 * day,
        "renewalPrice": 9990, "currency": "USD", "appTransactionId": "704289572311463478",
    }
    notification = {
        "notificationType": "DID_RENEW", "notificationUUID": str(uuid.uuid4()), "version": "2.0",
        "signedDate": signed,
        "data": {
            "appAppleId": APP_APPLE_ID, "bundleId": BUNDLE_ID, "bundleVersion": "42", "environment": "Sandbox",
            "signedTransactionInfo": sign_jws(transaction, leaf_key, chain),
            "signedRenewalInfo": sign_jws(renewal_info, leaf_key, chain),
            "status": 1,
        },
    }
    with open(os.path.join(out, "root.der"), "wb") as f:
        f.write(root.public_bytes(serialization.Encoding.DER))
    with open(os.path.join(out, "notification.jws"), "w") as f:
        f.write(sign_jws(notification, leaf_key, chain))


if __name__ == "__main__":
    main()
