-- Ending a job: complete, fail with retry, fail for good, cancel. Needs a batch B (group.lua)
-- and a table K of keys: jobs, held, completed, failed, outcomes, outcomeRecords (the last two
-- written only when a job with a callback URL ends), dedup (written only when a job its
-- producer named ends, dedup.lua), results (settle's alone: keepResult).
--
-- A lease L being ended: { id, group, groupKey, member (in the group zset), hint, state, data,
-- deadline, status?, lapsed?, batch? }. `hint` says whether the job is in its group zset: 's' no (a
-- solo lease), 'm' yes, '?' unknown (the caller did not lease it itself): with '?' both removal
-- and re-adding are done, harmless when there was nothing to do; '-' (retire only): the job is
-- out of its group already and not counted there (delayed, or detached by the caller).
-- `state`, `data` and `deadline` are read only when needed: completing a job that is not kept
-- needs none of them. `status` is the endpoint's HTTP answer (0: none), `lapsed` marks a lease
-- that ran out; both go to the attempt history, as does `batch` ({id, index, size}: the batch
-- the attempt was part of, docs/batches.md). `named` (optional): the producer named the
-- job's id (its state's `i`), for a caller that does not read the state. `attempt` (optional):
-- the attempt under way as its leaser knows it, for the `completed` event of a job whose state
-- is not read (events.lua).

-- @include job
-- @include meta
-- @include flow
-- @include dedup
-- @include group
-- @include history
-- @include outcome
-- @include quota
-- @include totals
-- @include bytes
-- @include events
-- @include expiry
-- @include batch

-- Keeps at most `keep` jobs in a retention zset (oldest go first), removing at most `step` per
-- call: one per finished job keeps up as jobs finish; the tick trims a lowered limit in steps.
-- Returns true when more remain to trim.
local function trimRetention(zkey, jobsKey, keep, step)
  local excess = redis.call('ZCARD', zkey) - keep
  if excess <= 0 then return false end
  local popped = redis.call('ZPOPMIN', zkey, math.min(excess, step))
  local ids = {}
  for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
  redis.call('HDEL', jobsKey, unpack(ids))
  return excess > step
end

-- A flow group's lease of `member` ended: the member is no longer taken (a lease of unknown
-- member stands for it when it is not listed). A group left without jobs leaves `held`.
local function releaseTaken(K, B, group, F, member)
  local at = indexOf(F.t, member) or indexOf(F.t, '?')
  if at then table.remove(F.t, at) end
  if groupJobs(B.M, group) == 0 and F.h and F.h ~= 'paused' then
    redis.call('ZREM', K.held, group)
    F.h = nil
  end
end

-- A completed job a waiter asked for (its state's `w`, set at enqueue: docs/client.md), or one
-- that ends while its queue's events are wanted (docs/events.md: its end is answered for the
-- events' retention), on a queue that keeps no completed jobs: its record stays
-- RESULT_WINDOW_MS, listed in `results`, so that a waiter or a job stream reads its end and
-- result. Expired ones are trimmed at most once a minute (meta `resultTrimAt`), 100 at a time:
-- keeping a job costs its ZADD alone.
-- (Its trim period, 60 s, is written where it is used: tick.lua is near Lua's 200 locals.)
local RESULT_WINDOW_MS = 300000

local function keepResult(K, B, L, now)
  L.state.f = now
  B.fresh[#B.fresh + 1] = L.id
  B.fresh[#B.fresh + 1] = encodeJob(L.state, L.data)
  if now >= metaNum(B.M, 'resultTrimAt') then
    metaSet(B.M, 'resultTrimAt', int(now + 60000))
    local expired = redis.call('ZRANGEBYSCORE', K.results, '-inf', now, 'LIMIT', 0, 100)
    if #expired > 0 then
      redis.call('HDEL', K.jobs, unpack(expired))
      redis.call('ZREM', K.results, unpack(expired))
    end
  end
  redis.call('ZADD', K.results, now + RESULT_WINDOW_MS, L.id)
end

-- Moves a finished job out of its group and into retention (or deletes it), then lets the
-- group's next job become ready. Every end of a job comes here: a job with a callback URL (its
-- own, or its queue's) has its outcome recorded (outcome.lua), named by `L.state.st`; callers
-- read the state of such a job even when they would not otherwise.
local function retire(K, B, L, zkey, keep, now)
  local inGroup = L.hint ~= '-'
  local F = inGroup and isFlow(B.M, L.group) and flowOf(K, B, L.groupKey, L.group)
  -- A lease of a batch that is out: its member leaves with the batch's last (batch.lua).
  if inGroup and L.hint ~= 's' then
    if Batch.out(B.M, L.group) > 0 then Batch.unlink(B, L.groupKey, L.member) else redis.call('ZREM', L.groupKey, L.member) end
  end
  local free = not inGroup or Batch.leaseEnded(B.M, L.group) or F
  if inGroup then addGroupJobs(B.M, L.group, -1) end
  countJobs(B.M, -1)
  if F then releaseTaken(K, B, L.group, F, L.member) end
  local url = L.state and (L.state.cb or B.M.cfg.callbackUrl)
  if url then recordOutcome(B, L, url, now) end
  if L.named or (L.state and L.state.i) then
    noteEnded(B, L.id, L.state and L.state.st or 'completed', now) -- only a completion comes without its state
  end
  if keep > 0 then
    L.state.f = now
    B.fresh[#B.fresh + 1] = L.id
    B.fresh[#B.fresh + 1] = encodeJob(L.state, L.data)
    redis.call('ZADD', zkey, now, L.id)
    trimRetention(zkey, K.jobs, keep, 2)
  elseif L.state and (L.state.w or B.M.events) and zkey == K.completed and K.results then
    keepResult(K, B, L, now)
  else
    B.deleted[#B.deleted + 1] = L.id
  end
  if inGroup and free and groupJobs(B.M, L.group) > 0 then advanceGroup(K, B, L.groupKey, L.group) end
end

-- The attempt's start, recorded on a finished job: from its first heartbeat, else from the lease
-- deadline reserve set (with the config's timeout as it is now).
local function startOf(state, cfg, deadline)
  return state.sa or (deadline - leaseMsOf(state, cfg))
end

-- The run histogram (totals.lua) takes every attempt that ended with an answer or a lease that
-- ran out. Its start: recorded, else told by the caller (the dispatcher knows when it leased
-- the job), else from the lease deadline; a caller that knows none of them counts no run.
local function observeRun(B, cfg, L, now)
  local start = L.state and L.state.sa or L.startedAt
  if not start and L.deadline then start = L.deadline - leaseMsOf(L.state or {}, cfg) end
  if start then observe(B.M, 'h:r', now - start) end
end

local function completeJob(K, B, cfg, L, result, truncated, now)
  local state = L.state
  observeRun(B, cfg, L, now)
  countTotal(B.M, 'n:c')
  if state then
    state.a = (state.a or 0) + 1
    state.sa = startOf(state, cfg, L.deadline)
    noteAttempt(state, state.sa, 'c', L.status, nil, now, L.batch)
    state.st = 'completed'
    state.e = nil -- an earlier attempt's error no longer describes the job
    if result ~= '' then state.r = result end
    if truncated then state.rt = true end
  end
  retire(K, B, L, K.completed, cfg.keepCompleted, now)
  -- The result is the leaser's text, at hand: the event needs no read of the record.
  noteEvent(B.M, 'completed', L.id, L.group, 'completed', state and state.a or L.attempt, now, result, truncated and 1 or 0)
  return 'completed'
end

-- Backoff before retry `attempt` (1-based count of attempts made). `jitter` is a random number
-- in [0, 1): with jitter on, the delay is spread over [delay/2, delay).
local function backoffMs(backoff, attempt, jitter)
  local delay = backoff.delayMs
  if backoff.type == 'exponential' then
    delay = math.min(delay * math.pow(2, attempt - 1), backoff.maxDelayMs)
  end
  if backoff.jitter then delay = delay / 2 + delay / 2 * jitter end
  return math.floor(delay)
end

-- The job of lease L waits again in its group, at its own place, until `at`: its group is held
-- till then, so that later jobs cannot overtake it (a flow group's offered jobs step back).
local function waitAgain(K, B, L, at, now)
  countWaiting(B.M, L.id, 1, #L.data) -- it waits again (bytes.lua)
  local free = Batch.leaseEnded(B.M, L.group) -- the last of its batch out offers the group
  local F = isFlow(B.M, L.group) and flowOf(K, B, L.groupKey, L.group)
  -- A solo lease's job joins its group now, at its own place (adding it again is harmless).
  if L.hint ~= 'm' then redis.call('ZADD', L.groupKey, L.state.o, L.member) end
  if F then
    releaseTaken(K, B, L.group, F, L.member)
    pullOffered(K, B, L.groupKey, L.group, F)
    if at <= now then return refillGroup(K, B, L.groupKey, L.group, F) end
    return holdFlow(K, B, L.group, F, at)
  end
  if at <= now then
    if free then advanceGroup(K, B, L.groupKey, L.group) end
    return
  end
  redis.call('ZADD', K.held, at, L.group)
  noteTimer(B.M, at)
  Batch.holding(B.M, L.group, true) -- the rest of its batch, when they end, offer nothing
end

-- A batch's job that its endpoint did not get to (a partial answer, or a failure ahead of it):
-- back in its place at the head of its group, untouched, with no attempt counted. Its lease
-- token changes all the same (`rl`, job.lua tokenFor): the batch's holder cannot end the job's
-- next lease. A job with a TTL has its deadline to start again (expiry.lua): the caller saves it.
-- (In the Batch table: enqueue.lua is near Lua's 200 locals.)
function Batch.release(K, B, L, now)
  local state = L.state
  state.rl = (state.rl or 0) + 1
  state.sa, state.p = nil, nil
  B.fresh[#B.fresh + 1] = L.id
  B.fresh[#B.fresh + 1] = encodeJob(state, L.data)
  noteExpiry(B, L.id, state)
  waitAgain(K, B, L, now, now)
  noteEvent(B.M, 'added', L.id, L.group, 'waiting', state.a or 0, now, -1)
  return 'waiting'
end

-- An endpoint's 429 that uses no attempt (docs/flow-control.md#backpressure-the-endpoints-429): the job waits
-- for Retry-After (else the backoff by throttles in a row), and with backpressure "queue" the
-- queue's dispatch waits as long. `th` counts 429s in a row and makes the next lease's token new.
-- The wait is cut to what is left of the job's maxThrottleMs (`budget`), and `tt` adds it up: no
-- Retry-After holds the job, its group or the queue longer than that.
local function throttleJob(K, B, cfg, L, err, retryAfterMs, budget, seed, now)
  local state = L.state
  state.th = (state.th or 0) + 1
  state.e = err
  state.sa, state.p = nil, nil
  local delay = retryAfterMs
  if delay < 0 then delay = backoffMs(state.bo or cfg.backoff, state.th, jitterFor(seed, L.id)) end
  delay = math.min(delay, DAY_MS, budget)
  state.tt = (state.tt or 0) + delay
  state.ra = now + delay
  countTotal(B.M, 'n:t')
  B.fresh[#B.fresh + 1] = L.id
  B.fresh[#B.fresh + 1] = encodeJob(state, L.data)
  if cfg.backpressure == 'queue' and state.ra > metaNum(B.M, 'hold') then
    metaSet(B.M, 'hold', int(state.ra))
    noteTimer(B.M, state.ra)
  end
  waitAgain(K, B, L, state.ra, now)
  noteEvent(B.M, 'retrying', L.id, L.group, 'waiting', state.a or 0, now, err, state.ra)
  return 'waiting'
end

-- 429s in a row after which a job fails for good (`throttled`): a broken endpoint cannot loop.
local THROTTLE_LIMIT = 100
-- maxThrottleMs of a config stored before the field (src/protocol/config.ts, ADDED_DEFAULTS).
local MAX_THROTTLE_MS = 3600000

-- A failed attempt. `retryAfterMs` < 0 means "use the backoff"; `retry` false fails for good.
-- A retried job stays in its group (at its own orderMs) and the group is held until runAt, so
-- later jobs cannot overtake it.
local function failJob(K, B, cfg, L, err, retry, retryAfterMs, seed, now)
  local state = L.state
  state.x = nil -- it started: its deadline to start no longer applies (expiry.lua)
  observeRun(B, cfg, L, now)
  if retry and L.status == 429 then
    local budget = (cfg.maxThrottleMs or MAX_THROTTLE_MS) - (state.tt or 0)
    if (state.th or 0) + 1 >= THROTTLE_LIMIT then
      err = 'throttled: ' .. THROTTLE_LIMIT .. ' answers 429 in a row (' .. err .. ')'
    elseif budget <= 0 then
      err = 'throttled: held ' .. int(state.tt) .. ' ms by answers 429, the queue\'s maxThrottleMs (' .. err .. ')'
    else
      return throttleJob(K, B, cfg, L, err, retryAfterMs, budget, seed, now)
    end
    retry = false
  end
  state.th = nil
  local attempts = (state.a or 0) + 1
  state.a = attempts
  state.e = err
  noteAttempt(state, startOf(state, cfg, L.deadline), L.lapsed and 'e' or 'f', L.status, err, now, L.batch)
  if retry and attempts < (state.ma or cfg.maxAttempts) then
    state.sa, state.p = nil, nil -- the next attempt starts afresh
    local delay = retryAfterMs
    if delay < 0 then delay = backoffMs(state.bo or cfg.backoff, attempts, jitterFor(seed, L.id)) end
    state.ra = now + math.min(delay, DAY_MS) -- the attempt counted: the next lease has a new token
    countTotal(B.M, 'n:r')
    B.fresh[#B.fresh + 1] = L.id
    B.fresh[#B.fresh + 1] = encodeJob(state, L.data)
    waitAgain(K, B, L, state.ra, now)
    noteEvent(B.M, 'retrying', L.id, L.group, 'waiting', attempts, now, err, state.ra)
    return 'waiting'
  end
  state.sa = startOf(state, cfg, L.deadline)
  state.st = 'failed'
  state.tt = nil -- a retry by hand starts with the whole maxThrottleMs
  countTotal(B.M, 'n:f')
  retire(K, B, L, K.failed, cfg.keepFailed, now)
  noteEvent(B.M, 'failed', L.id, L.group, 'failed', attempts, now, err)
  return 'failed'
end
