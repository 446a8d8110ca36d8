-- What bounds a queue's size and its strangers (docs/security.md#every-limit-and-its-default): the maxJobs and
-- maxBytes quotas, the maxDelayMs bound on starts, and what a publish token may add (publishMaxJobs,
-- publishMaxDataBytes; its rate limits are publish-rate.lua's). Each check only reads, so an
-- enqueue makes them all before its first write and a refusal writes nothing.
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
-- @include bytes

-- What a stored config without the fields means (src/protocol/config.ts, ADDED_DEFAULTS).
local DEFAULT_MAX_JOBS = 1000000
local DEFAULT_MAX_DELAY_MS = 31622400000
local DEFAULT_MAX_BYTES = 1073741824
local DEFAULT_PUBLISH_MAX_JOBS = 10000
local DEFAULT_PUBLISH_MAX_DATA_BYTES = 65536
-- A job added (delta 1) or ended (delta -1): the live count, once known, and the added total.
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

-- {QUEUE_FULL, limit, its name} when `adding` more jobs of `bytes` data in all would pass the
-- queue's maxJobs (waiting + delayed), its maxBytes (their data), or, for `published` ones, its
-- publishMaxJobs (those of them a publish token sent; both counts are bytes.lua's), else nil.
-- publishMaxJobs never refuses the backend's (admin) enqueues. `bytes` is what the stored data grows by: a debounce
-- collapse adds no job but may grow (or shrink) the data it replaces.
local function queueFull(K, M, cfg, adding, published, bytes)
  if adding <= 0 and bytes <= 0 then return nil end
  local max = cfg.maxJobs or DEFAULT_MAX_JOBS
  if adding > 0 and liveJobs(K, M) - metaNum(M, 'active') + adding > max then return { QUEUE_FULL, max, 'maxJobs' } end
  local maxBytes = cfg.maxBytes
  if maxBytes == nil then maxBytes = DEFAULT_MAX_BYTES end
  if bytes > 0 and maxBytes ~= cjson.null and metaNum(M, 'bytes') + bytes > maxBytes then return { QUEUE_FULL, maxBytes, 'maxBytes' } end
  local pubMax = cfg.publishMaxJobs or DEFAULT_PUBLISH_MAX_JOBS
  if adding > 0 and published and metaNum(M, 'pub') + adding > pubMax then return { QUEUE_FULL, pubMax, 'publishMaxJobs' } end
  return nil
end

-- The largest `data` a job may have: maxPayloadBytes, and for a publish token's no more than
-- publishMaxDataBytes. Returns the bound and its name.
local function maxDataOf(cfg, published)
  local pubMax = cfg.publishMaxDataBytes or DEFAULT_PUBLISH_MAX_DATA_BYTES
  if published and pubMax < cfg.maxPayloadBytes then return pubMax, 'publishMaxDataBytes' end
  return cfg.maxPayloadBytes, 'maxPayloadBytes'
end

-- The latest start a producer may ask for, from now.
local function maxDelayOf(cfg)
  return cfg.maxDelayMs or DEFAULT_MAX_DELAY_MS
end
