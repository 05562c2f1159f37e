-- A notification's content digest (notifications.fact_sha256) is now the SHA-256 of the signing input its signature
-- covers — `header.payload` of the signedPayload, as received — which the signature check computes anyway, instead of
-- a second SHA-256 of the ~13 kB decoded payload (issue 15: ~2 % of a worker's CPU). It names the same signed bytes:
-- an Apple retry (the same signedPayload) has the same digest. Only the decoded-fact cache reads it; rows recorded
-- before this migration keep the digest of the verified payload bytes, which the cache treats as any other key.
COMMENT ON COLUMN notifications.fact_sha256 IS 'SHA-256 of the notification JWS''s signing input (header.payload as received; before migration 0020: of the verified payload bytes; NULL for rows recorded before migration 0010).';
