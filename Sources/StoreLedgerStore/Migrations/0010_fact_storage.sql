-- How verified facts are stored: without the nested JWS texts, with content digests, compressed with LZ4.
--
-- 1. A notification's payload is stored without data.signedTransactionInfo and data.signedRenewalInfo: those
-- JWS texts (certificate chains included) were three quarters of every row and are redundant, as their
-- verified contents are the row's transaction_payload and renewal_payload and the raw JWS stays in the
-- event log byte for byte. Rows recorded before this migration lose them too, so every row has one shape.
-- The projections never read them.
UPDATE notifications
SET payload = payload #- '{data,signedTransactionInfo}' #- '{data,signedRenewalInfo}'
WHERE payload -> 'data' ?| ARRAY['signedTransactionInfo', 'signedRenewalInfo'];

-- 2. Each notification's content digest: the SHA-256 of its verified payload bytes (nested JWS texts
-- included, so it names the nested contents too), as transactions and renewal_infos have. A worker lists a row's facts
-- by digest and decodes only those it has not seen; rows recorded before this migration have none (they
-- are read in full) until a rebuild records them again.
ALTER TABLE notifications ADD COLUMN fact_sha256 bytea CHECK (octet_length(fact_sha256) = 32);

COMMENT ON COLUMN notifications.fact_sha256 IS 'SHA-256 of the verified notification payload bytes (NULL for rows recorded before migration 0010).';
COMMENT ON COLUMN notifications.payload IS 'The decoded notification, without the nested JWS texts (decoded in transaction_payload and renewal_payload; raw in events.body).';

-- 3. Verified payloads and raw bodies are compressed with LZ4 instead of PostgreSQL's default pglz.
--
-- A notification row with its payloads can exceed the 2 kB TOAST threshold, so inserts compress it; with
-- pglz that compression was the largest single cost of PostgreSQL's share of the worker's work. LZ4
-- compresses several times faster at a similar ratio. It applies to values written from now on; stored
-- values stay readable either way. The event log's existing partitions are altered
-- one by one (the parent's setting only reaches partitions created later). On a server built without
-- LZ4 this migration changes nothing (pglz stays), rather than failing.
DO $compression$
DECLARE
    target record;
BEGIN
    FOR target IN
        SELECT inhrelid::regclass::text AS table_name, 'body' AS column_name
        FROM pg_inherits WHERE inhparent = 'events'::regclass
        UNION ALL
        SELECT * FROM (VALUES
            ('events', 'body'),
            ('notifications', 'payload'),
            ('notifications', 'transaction_payload'),
            ('notifications', 'renewal_payload'),
            ('transactions', 'payload'),
            ('renewal_infos', 'payload')
        ) AS t(table_name, column_name)
    LOOP
        BEGIN
            EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET COMPRESSION lz4', target.table_name, target.column_name);
        EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
            RAISE NOTICE 'LZ4 is not available on this server; %.% keeps pglz', target.table_name, target.column_name;
        END;
    END LOOP;
END
$compression$;
