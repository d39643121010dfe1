-- wrk script for bench/origin.sh: every request asks for one random, 64 KiB-aligned
-- 64 KiB range of the file named by the URL (1 GiB by default).
--
--   wrk -t2 -c64 -d15s --latency -s bench/random-range.lua http://HOST:PORT/PATH [-- FILE_SIZE]
--
-- done() prints one machine-readable line that origin.sh parses:
--   WRK_RESULT requests=N duration_us=N bytes=N status_errors=N connect_errors=N
--              read_errors=N write_errors=N timeouts=N p50_us=N p99_us=N

local chunk = 65536
local chunks = 16384 -- 1 GiB / 64 KiB

local thread_counter = 0
function setup(thread)
  thread_counter = thread_counter + 1
  thread:set("thread_id", thread_counter)
end

function init(args)
  if args[1] then
    chunks = math.floor(tonumber(args[1]) / chunk)
  end
  -- A different sequence per thread; still reproducible run to run.
  math.randomseed(12345 + 7919 * (thread_id or 0))
end

function request()
  local first = (math.random(chunks) - 1) * chunk
  local range = string.format("bytes=%d-%d", first, first + chunk - 1)
  return wrk.format("GET", wrk.path, { ["Range"] = range })
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRK_RESULT requests=%d duration_us=%d bytes=%d status_errors=%d connect_errors=%d "
      .. "read_errors=%d write_errors=%d timeouts=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, summary.bytes, e.status, e.connect,
    e.read, e.write, e.timeout, latency:percentile(50), latency:percentile(99)))
end
