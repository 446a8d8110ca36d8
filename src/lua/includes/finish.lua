-- Ending a lease: complete, fail with retry, fail for good. Needs job.lua and group.lua, a
-- batch B (group.lua) and a table K of keys: jobs, ready, held, completed, failed, prefix.

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

-- Moves a finished job out of its group and into retention (or deletes it), then lets the
-- group's next job become ready.
local function retire(K, B, id, state, data, zkey, keep, now)
  local groupKey = groupKeyOf(K.prefix, state.g)
  redis.call('ZREM', groupKey, memberOf(state.s, id))
  if keep > 0 then
    state.f = now
    state.t = nil
    redis.call('HSET', K.jobs, id, encodeJob(state, data))
    redis.call('ZADD', zkey, now, id)
    trimRetention(zkey, K.jobs, keep, 2)
  else
    B.deleted[#B.deleted + 1] = id
  end
  advanceGroup(B, groupKey)
end

-- The attempt's start, recorded on a finished job: from its first heartbeat, else from the lease
-- deadline reserve set (with the config's timeout as it is now).
local function startOf(state, cfg, deadline)
  return state.sa or (deadline - leaseMsOf(state, cfg))
end

local function completeJob(K, B, cfg, id, state, data, deadline, result, truncated, now)
  state.a = (state.a or 0) + 1
  state.sa = startOf(state, cfg, deadline)
  state.st = 'completed'
  state.e = nil -- an earlier attempt's error no longer describes the job
  if result ~= '' then state.r = result end
  if truncated then state.rt = true end
  retire(K, B, id, state, data, K.completed, cfg.keepCompleted, now)
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

-- A failed attempt. `retryAfterMs` < 0 means "use the backoff"; `retry` false fails for good.
-- A retried job stays in its group (at its own orderMs) and the group is held until runAt, so
-- later jobs cannot overtake it.
local function failJob(K, B, cfg, id, state, data, deadline, err, retry, retryAfterMs, seed, now)
  local attempts = (state.a or 0) + 1
  state.a = attempts
  state.e = err
  if retry and attempts < (state.ma or cfg.maxAttempts) then
    state.sa, state.p = nil, nil -- the next attempt starts afresh
    local delay = retryAfterMs
    if delay < 0 then delay = backoffMs(state.bo or cfg.backoff, attempts, jitterFor(seed, id)) end
    state.ra = now + math.min(delay, DAY_MS)
    state.t = tokenFor(seed, id, attempts)
    redis.call('HSET', K.jobs, id, encodeJob(state, data))
    if state.ra <= now then
      advanceGroup(B, groupKeyOf(K.prefix, state.g))
    else
      redis.call('ZADD', K.held, state.ra, state.g)
      batchTimer(B, state.ra)
    end
    return 'waiting'
  end
  state.sa = startOf(state, cfg, deadline)
  state.st = 'failed'
  retire(K, B, id, state, data, K.failed, cfg.keepFailed, now)
  return 'failed'
end
