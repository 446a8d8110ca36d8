-- What bounds a queue's size and its strangers (docs/security.md#every-limit-and-its-default): the maxJobs quota, the
-- maxDelayMs bound on starts, and the publish rate limit. Each check only reads, so an enqueue
-- makes them all before its first write and a refusal writes nothing.
--
-- meta `live` counts the queue's jobs that have not ended (waiting, delayed, active): waiting +
-- delayed is `live` - `active`. Every script that adds or ends a job keeps it with countJobs, at
-- no command of its own (meta is read and written once per call anyway). A queue created before
-- the field has none: until an enqueue counts it (liveJobs, once, 4 commands), scripts leave it
-- absent rather than move a count nobody took.

-- @include errors
-- @include job
-- @include meta
-- @include totals

-- What a stored config without the fields means (src/protocol/config.ts, ADDED_DEFAULTS).
local DEFAULT_MAX_JOBS = 1000000
local DEFAULT_MAX_DELAY_MS = 31622400000
local DEFAULT_PUBLISH_RATE = { max = 120, periodMs = 60000 }

-- A job added (delta 1) or ended (delta -1): the live count, once known; the added total.
local function countJobs(M, delta)
  if delta > 0 then countTotal(M, 'n:a', delta) end
  local live = metaGet(M, 'live')
  if live and delta ~= 0 then metaSet(M, 'live', int(tonumber(live) + delta)) end
end

-- The queue's jobs that have not ended. A queue without the count gets it from its keys: every
-- record in `jobs` that is not a kept finished one (K needs jobs, completed, failed, cancelled).
local function liveJobs(K, M)
  local live = metaGet(M, 'live')
  if live then return tonumber(live) end
  local n = redis.call('HLEN', K.jobs) - redis.call('ZCARD', K.completed) - redis.call('ZCARD', K.failed)
    - redis.call('ZCARD', K.cancelled)
  n = math.max(n, 0)
  metaSet(M, 'live', int(n)) -- written with the call's meta, only if it goes on to write
  return n
end

-- {QUEUE_FULL, maxJobs} when `adding` more jobs would pass the queue's maxJobs (waiting +
-- delayed), else nil.
local function queueFull(K, M, cfg, adding)
  if adding <= 0 then return nil end
  local max = cfg.maxJobs or DEFAULT_MAX_JOBS
  if liveJobs(K, M) - metaNum(M, 'active') + adding > max then return { QUEUE_FULL, max } end
  return nil
end

-- The latest start a producer may ask for, from now.
local function maxDelayOf(cfg)
  return cfg.maxDelayMs or DEFAULT_MAX_DELAY_MS
end

-- The publish rate limit: a fixed window per client, the string key `rate` counting the jobs
-- the client enqueued since its window opened, and expiring when it closes. Returns a refusal
-- {RATE_LIMITED, ms until the window closes, max, periodMs}, or nil and what takeRate needs.
-- Reading costs one GET (and a PTTL when refused).
local function checkRate(key, cfg, n)
  local limit = cfg.publishRateLimit
  if limit == nil then limit = DEFAULT_PUBLISH_RATE end
  if limit == cjson.null then return nil, nil end
  local used = tonumber(redis.call('GET', key)) or 0
  if used + n > limit.max then
    local left = used > 0 and redis.call('PTTL', key) or -1
    return { RATE_LIMITED, left > 0 and left or limit.periodMs, limit.max, limit.periodMs }, nil
  end
  return nil, { key = key, used = used, n = n, periodMs = limit.periodMs }
end

-- Spends what checkRate allowed (one command): the first jobs of a window open it.
local function takeRate(R)
  if not R then return end
  if R.used == 0 then
    redis.call('SET', R.key, R.n, 'PX', R.periodMs)
  else
    redis.call('INCRBY', R.key, R.n) -- keeps the key's expiry: the window does not move
  end
end
