-- wrk script for bench/api-latency.sh and bench/service.sh: plain GETs, counting answers that
-- are not 200 and printing one line for the caller to parse:
--   LAT_RESULT requests=N duration_us=N non200=N errors=N p50_us=N p90_us=N p99_us=N max_us=N bytes=N
--
-- With PACE_MS=N in the environment, each connection waits N ms after an answer before its
-- next request (wrk's delay()): `PACE_MS=20 wrk -t1 -c1 -d8s -s bench/latency.lua URL` is one
-- keep-alive client asking about every 20 ms. wrk measures latency from the request's write to
-- the end of the answer, so the pause is not part of it.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  non200 = 0
end

local pace = tonumber(os.getenv("PACE_MS") or "")
if pace and pace > 0 then
  function delay()
    return pace
  end
end

function response(status, headers, body)
  if status ~= 200 then non200 = non200 + 1 end
end

function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + t:get("non200") end
  local e = summary.errors
  io.write(string.format(
    "LAT_RESULT requests=%d duration_us=%d non200=%d errors=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d bytes=%d\n",
    summary.requests, summary.duration, bad, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, summary.bytes))
end
