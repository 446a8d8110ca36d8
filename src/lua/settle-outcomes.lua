#!lua flags=allow-key-locking
--[[ settle-outcomes: ends attempts to send outcome callbacks (outcome.lua), each fenced by its
attempt number and the job's finishedAt: a sender whose lease ran out (the tick leased the
outcome again) changes nothing. Delivered: the record goes. Failed: the next attempt waits
by the schedule below, or, after the last one, the record goes as abandoned. Not sent (its
sender got no push slot in time): the attempt is given back uncounted, due again at once; an
attempt counts when it is sent, never for waiting. A record that goes leaves its summary on
the job's record while groupq still keeps the job (the job view's `outcome`).

KEYS[1] meta             hash  config and counters (meta.lua)
KEYS[2] jobs             hash  id -> job record
KEYS[3] outcomes         zset  pending outcome callbacks by next attempt
KEYS[4] outcome-records  hash  job id -> outcome record

ARGV[1] now (epoch ms)
ARGV[2] m, the number of attempts; then 4 fields per attempt:
        job id, attempt (the record's `n`), finishedAt (its `f`),
        error ('' = delivered, '-' = not sent, src/core/push/outcome-callback.ts NOT_SENT)

Returns {1, dueAt}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include outcome
-- @include totals

-- The wait before attempt n + 1 after attempt n failed; attempt 6 is the last
-- (docs/delivery.md#outcome-callbacks): attempts at 0, 5 s, 35 s, 2 min 35 s, 12 min 35 s and 1 h 12 min 35 s.
local RETRY_MS = { 5000, 30000, 120000, 600000, 3600000 }

local K = { outcomes = KEYS[3], outcomeRecords = KEYS[4] }
local now, m = tonumber(ARGV[1]), tonumber(ARGV[2])
local function arg(i, field) return ARGV[2 + (i - 1) * 4 + field] end

local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end

local ids = {}
for i = 1, m do ids[i] = arg(i, 1) end
local records = redis.call('HMGET', K.outcomeRecords, unpack(ids))
-- Whether groupq keeps a job that ended this way (the job's record then shows the outcome).
local function jobKept(state)
  if state == 'completed' then return M.cfg.keepCompleted > 0 end
  return M.cfg.keepFailed > 0 -- failed, cancelled and expired jobs, kept like failed ones
end

local retried, gone, summaries, shown = {}, {}, {}, {}
for i = 1, m do
  local record = records[i] and cjson.decode(records[i])
  local err = arg(i, 4)
  local fenced = record and record.n == tonumber(arg(i, 2)) and record.f == tonumber(arg(i, 3))
  if fenced and err == '-' then
    -- Never sent: the claim is undone (its n was this lease's), the next tick takes it again.
    record.n, record.t = record.n - 1, now
    retried[#retried + 1] = { ids[i], cjson.encode(record), record.t }
    noteTimer(M, record.t)
  elseif fenced then
    local summary = { st = 'delivered', n = record.n, d = now }
    if err ~= '' then
      record.le = err
      summary = { st = 'abandoned', n = record.n, le = err }
    end
    countTotal(M, err == '' and 'n:os' or 'n:of')
    if err ~= '' and not RETRY_MS[record.n] then countTotal(M, 'n:oa') end
    if err ~= '' and RETRY_MS[record.n] then
      record.t = now + RETRY_MS[record.n]
      retried[#retried + 1] = { ids[i], cjson.encode(record), record.t }
      noteTimer(M, record.t)
    else
      gone[#gone + 1] = ids[i]
      if jobKept(record.s) then
        shown[#shown + 1] = ids[i]
        summaries[ids[i]] = { summary = summary, s = record.s, f = record.f }
      end
    end
  end
end
saveOutcomes(K, retried)
if #gone > 0 then
  redis.call('HDEL', K.outcomeRecords, unpack(gone))
  redis.call('ZREM', K.outcomes, unpack(gone))
end
if #shown > 0 then
  -- Jobs groupq still keeps show how their outcome went.
  local fresh = {}
  for i, raw in ipairs(redis.call('HMGET', KEYS[2], unpack(shown))) do
    if raw then
      local state, data = decodeJob(raw)
      local ended = summaries[shown[i]]
      -- Only onto the end it reports: a job retried by hand meanwhile is not that job any more.
      if state.st == ended.s and state.f == ended.f then
        state.oc = ended.summary
        pushAll(fresh, shown[i], encodeJob(state, data))
      end
    end
  end
  if #fresh > 0 then redis.call('HSET', KEYS[2], unpack(fresh)) end
end
saveMeta(M)
return { 1, dueReport(M, now) }
