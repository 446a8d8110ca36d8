-- Outcome callbacks (docs/delivery.md#outcome-callbacks): when a job with a callback URL ends, the
-- script that ends it records the outcome in the same call, so neither a Redis restart (AOF)
-- nor a Worker killed before sending loses it.
--
-- `outcome-records` holds job id -> record JSON; `outcomes` holds the pending ones by the time
-- of their next attempt. A record is leased like a job: an attempt moves its score to the end
-- of its lease, so one sender has it at a time, and an attempt nobody settled comes round again
-- through the tick once the lease is over. Record fields (short, like job records):
--   u callback URL, g group, s 'completed'|'failed'|'cancelled', r result (JSON text),
--   rt result truncated, e error, a the job's attempts, f finishedAt,
--   n outcome attempts made (the current one included; one its sender gives back as not sent
--   is uncounted), t its lease end or next attempt,
--   le the last attempt's error, tp/ts the job's trace context (job.lua), sent on as headers,
--   w its webhook-id's 32 hex digits (meta.lua messageIdFor): the same on each attempt of this
--   callback, another for the job's next end after a retry by hand (whose nonce is new).
-- meta's `outcomes` is '1' while records may be pending: set when one is recorded, cleared by
-- the tick once `outcomes` is found empty. A queue that never had one never reads `outcomes`,
-- and settling an attempt needs no write of meta.

-- @include meta

local function pushAll(list, ...)
  for _, value in ipairs({ ... }) do list[#list + 1] = value end
end

-- How long a sender holds an attempt; its request is aborted 5 s before (src/core/push/outcome-callback.ts).
local OUTCOME_LEASE_MS = 15000

-- Records a finished job's outcome, leased to the caller for its first attempt. `L` is the
-- ended lease with its state (finish.lua); its `st` names the outcome. The batch writes the
-- record (flushBatch) and hands it to the caller to send (B.outcomes).
local function recordOutcome(B, L, url, now)
  local state = L.state
  local record = {
    u = url, g = L.group, s = state.st, r = state.r, rt = state.rt,
    e = state.st == 'failed' and state.e or nil, -- an earlier attempt's error is no cancel's reason
    a = state.a or 0, f = now, n = 1, t = now + OUTCOME_LEASE_MS, tp = state.tp, ts = state.ts,
    w = messageIdFor(B.M, L.id, state, 'out' .. (state.n or '')),
  }
  state.oc = nil -- an earlier end's summary no longer describes the job
  B.outcomes = B.outcomes or {}
  B.outcomes[#B.outcomes + 1] = { L.id, cjson.encode(record), record.t }
  noteTimer(B.M, record.t)
end

-- Writes records {{id, record JSON, next attempt or lease end}...}: one HSET and one ZADD for
-- all of them. A record written again for the same job replaces the earlier one.
local function saveOutcomes(K, list)
  if #list == 0 then return end
  local fields, scores = {}, {}
  for _, o in ipairs(list) do
    pushAll(fields, o[1], o[2])
    pushAll(scores, o[3], o[1])
  end
  redis.call('HSET', K.outcomeRecords, unpack(fields))
  redis.call('ZADD', K.outcomes, unpack(scores))
end

-- Writes the outcomes a batch recorded and flags them in meta. (A job retried by hand that
-- ended again replaces the outcome it had.)
local function writeOutcomes(K, B)
  saveOutcomes(K, B.outcomes)
  metaSet(B.M, 'outcomes', '1')
end

-- The queue's own signing secrets ('' where unset) go with each outcome handed to a caller, who
-- signs with them (src/core/push/signing.ts): read from the config, never stored in a record.
local function signingOf(M)
  return M.cfg.signingSecret or '', M.cfg.signingSecretNext or ''
end

-- What a caller gets to send: {{id, record JSON, signingSecret, signingSecretNext}...}.
local function outcomesToSend(B)
  local out = {}
  local secret, nextSecret = signingOf(B.M)
  for i, o in ipairs(B.outcomes or {}) do out[i] = { o[1], o[2], secret, nextSecret } end
  return out
end

-- Leases up to `limit` pending outcomes whose next attempt is due (the tick): each gets its
-- next attempt, sent by the caller. Returns them as outcomesToSend does, and whether more
-- were due.
local function claimOutcomes(K, M, now, limit)
  if not M.v.outcomes then return {}, false end
  local ids = redis.call('ZRANGEBYSCORE', K.outcomes, '-inf', now, 'LIMIT', 0, limit)
  if #ids == 0 then return {}, false end
  local out, leased, lost = {}, {}, {}
  local secret, nextSecret = signingOf(M)
  for i, raw in ipairs(redis.call('HMGET', K.outcomeRecords, unpack(ids))) do
    if raw then
      local record = cjson.decode(raw)
      -- n also fences this lease; an attempt its sender could not start is given back and
      -- uncounted (settle-outcomes.lua), one whose sender went silent stays counted.
      record.n, record.t = record.n + 1, now + OUTCOME_LEASE_MS
      local json = cjson.encode(record)
      out[#out + 1] = { ids[i], json, secret, nextSecret }
      leased[#leased + 1] = { ids[i], json, record.t }
    else
      lost[#lost + 1] = ids[i] -- no record (cannot happen): drop the entry rather than loop on it
    end
  end
  saveOutcomes(K, leased)
  if #lost > 0 then redis.call('ZREM', K.outcomes, unpack(lost)) end
  return out, #ids == limit
end

-- When the first pending outcome is due (its lease end or next attempt), or nil. None left
-- clears meta's flag (written when the caller saves meta).
local function nextOutcomeAt(K, M)
  if not M.v.outcomes then return nil end
  local at = tonumber(redis.call('ZRANGE', K.outcomes, 0, 0, 'WITHSCORES')[2])
  if not at then metaSet(M, 'outcomes', false) end
  return at
end
