-- A queue's lifetime totals for Prometheus (GET /metrics, src/handlers/prometheus.ts): counters
-- that only go up while the queue lives, and two histograms. All are fields of meta, read by
-- every call's HMGET and written by its HSET (meta.lua, TOTAL_FIELDS), so they cost no command.
--   'n:a' jobs added (enqueued, a repeat's run, a finished job retried by hand),
--   'n:c' jobs completed, 'n:f' jobs failed for good, 'n:r' attempts retried, 'n:x' jobs
--   cancelled, 'n:e' jobs expired (not started by their deadline, expiry.lua), 'n:t' answers 429 that held a job back (throttled), outcome callbacks:
--   'n:os' delivered, 'n:of' attempts that failed, 'n:oa' abandoned after the last attempt;
--   'h:w' wait: from when a job was due (enqueued, or its runAt) to each attempt's start;
--   'h:r' run: from an attempt's start to its end (an answer, or the lease running out).
-- A histogram is "<count in each bucket of BOUNDS_MS, then +Inf> <sum of ms>", one count per
-- bucket (not cumulative: the reader adds them up).

-- @include job
-- @include meta

local BOUNDS_MS = { 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 900000, 3600000 }

local function countTotal(M, field, n)
  metaAdd(M, field, n or 1)
end

local function observe(M, field, ms)
  ms = math.max(0, math.floor(ms))
  local values, buckets = {}, #BOUNDS_MS + 1
  for word in string.gmatch(metaGet(M, field) or '', '%S+') do values[#values + 1] = tonumber(word) end
  for i = #values + 1, buckets + 1 do values[i] = 0 end
  local at = buckets
  for i, bound in ipairs(BOUNDS_MS) do
    if ms <= bound then
      at = i
      break
    end
  end
  values[at] = values[at] + 1
  values[buckets + 1] = values[buckets + 1] + ms
  for i, value in ipairs(values) do values[i] = int(value) end
  metaSet(M, field, table.concat(values, ' '))
end

-- A leased job waited from when it was due: its enqueue (createdAt), or its runAt when later (a
-- delay, a retry's backoff, a 429's hold).
local function observeWait(M, state, now)
  observe(M, 'h:w', now - math.max(state.c or state.o, state.ra or 0))
end
