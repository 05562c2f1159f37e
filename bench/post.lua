-- wrk script for bench/receiver: POSTs the body in $BENCH_BODY_FILE (from bench_make_body) with
-- the signature's last 20 characters replaced by <run><thread><counter> digits ($BENCH_RUN
-- distinguishes runs against the same database), so every request
-- stores a distinct body (and SHA-256), as Apple's notifications are. Counts 200 responses and
-- prints them at the end as "BENCH_OK n" / "BENCH_NOT_OK n" for the stored-rows check.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_number", #threads)
end

function init(args)
  local file = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
  local body = file:read("*a")
  file:close()
  -- body ends with <20 digits>"}
  prefix = body:sub(1, #body - 22)
  suffix = body:sub(#body - 1)
  run = tonumber(os.getenv("BENCH_RUN") or "0")
  sent, ok, not_ok = 0, 0, 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["User-Agent"] = "wrk (storeledger bench)"
end

function request()
  sent = sent + 1
  return wrk.format(nil, nil, nil, prefix .. string.format("%02d%02d%016d", run, thread_number, sent) .. suffix)
end

function response(status, headers, body)
  if status == 200 then ok = ok + 1 else not_ok = not_ok + 1 end
end

function done(summary, latency, requests)
  local total_ok, total_not_ok = 0, 0
  for _, thread in ipairs(threads) do
    total_ok = total_ok + thread:get("ok")
    total_not_ok = total_not_ok + thread:get("not_ok")
  end
  io.write(string.format("BENCH_OK %d\nBENCH_NOT_OK %d\n", total_ok, total_not_ok))
end
