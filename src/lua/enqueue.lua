#!lua flags=allow-key-locking
--[[ enqueue: adds a batch of jobs (one or more) to a queue, all or nothing, then optionally
reserves up to N ready jobs in the same call: the Worker's enqueue hands them straight to its
dispatcher, so a job on an idle queue costs no separate reserve round trip.
Idempotent by id: a job whose id exists is not touched and is reported as a duplicate, and so is
one whose id the dedup window still remembers (dedup.lua). A job with a debounce key that maps
to a job of its group that has not started collapses into that job (debounce.lua), which takes
its data and its start (never later than its own first enqueue + maxDelayMs), keeping its place.
A job enqueued alone to an empty group of a queue with nothing else ready is leased "solo"
(group.lua): straight from its record, without entering its group zset or `ready`.

KEYS[1]    meta           hash  config and counters (meta.lua)
KEYS[2]    jobs           hash  id -> job record
KEYS[3]    ready          zset  idle group heads by orderMs
KEYS[4]    delayed        zset  '<id> <group>' by runAt
KEYS[5]    active         zset  lease members by lease deadline
KEYS[6]    held           zset  group -> release time (+inf: paused)
KEYS[7]    paused-groups  set   paused group names
KEYS[8]    prioritized    zset  idle group heads with a priority other than 0
KEYS[9]    starts         zset  recent starts (the queue rate limit, reserve.lua)
KEYS[10]   debounce       hash  debounce key -> the job it collapses into (debounce.lua)
KEYS[11]   dedup          zset  ids of ended jobs remembered by the dedup window (dedup.lua)
KEYS[12]   completed      zset  kept completed ids  } read only to count the jobs of a queue
KEYS[13]   failed         zset  kept failed ids     } created before meta kept `live`, once
KEYS[14]   cancelled      zset  kept cancelled ids  } (quota.lua)
KEYS[15]   rate           string  the client's count in its publishRateLimit window (ARGV[4] '1' only)
KEYS[16]   expiring       zset  '<id> <group>' of jobs with a ttlMs not started, by deadline (expiry.lua)
KEYS[17]   token-rate     string  the token's count in its publishTokenRateLimit window (ARGV[4] '1' only)
KEYS[17+i] group          zset  the group zset of job i

ARGV[1]  now (epoch ms)
ARGV[2]  r, how many ready jobs to reserve after adding (0: none)
ARGV[3]  n, the number of jobs
ARGV[4]  '1': a publish token sent the jobs, its rate limits checked here (publish-rate.lua);
         '2': a publish token sent them and its rate limits were spent at the queue's root (a
         partition of a partitioned queue); '' the admin.
ARGV[5]  events wanted until (epoch ms; 0: no change): an enqueue that answers an eventsUrl
         (docs/events.md) wants its jobs' events from this call on, before anyone opens the
         stream. Written with meta, which the call writes anyway: no command. Then 6 fields per job:
         id, group, orderMs (epoch ms), runAt (epoch ms, 0 = now), data (JSON text),
         options (JSON object of per-job state fields, e.g. {"ma":5}, or ''): among them `i` 1
         when the producer named the id, `db` a debounce key and `dx` its latest start (the
         job's runAt is then now + delayMs, capped by it), `tp`/`ts` its trace context (a
         job a debounced enqueue collapses into keeps its own), `x` its deadline to start
         (enqueue + ttlMs: an entry in `expiring` unless it is leased solo, expiry.lua)

Returns {1, {{id, state, flag}...}, config JSON, {{id, state JSON, data, lease deadline, hint, token, message id}...}, dueAt,
         events?}
  flag 0 new; 1 duplicate, state being the job's current one or, for an id the dedup window
  remembers, the state its job ended in (completed|failed|removed|cancelled|expired); 2 debounced, id
  being the job it collapsed into; leased jobs as settle returns them, none when r is 0; dueAt:
  lower the queue's due-index entry to this, -1 = nothing to do; events (events.lua, only
  while meta's `ev` is later than now): `added` for each job added or moved between waiting and
  delayed by a collapse, then `active` for each job leased
Errors  (all before the first write: a refusal writes nothing)
  {-1} QUEUE_NOT_FOUND; {-5, i, limit, its name} PAYLOAD_TOO_LARGE for job i (maxPayloadBytes,
  or publishMaxDataBytes for a publish token); {-14, i, maxDelayMs} DELAY_TOO_LONG for job i;
  {-13, ms left, max, periodMs, limit} RATE_LIMITED (publishRateLimit, publishTokenRateLimit);
  {-12, max, limit} QUEUE_FULL (maxJobs, or publishMaxJobs for a publish token: the new jobs
  would pass it, duplicates and collapses adding none; maxBytes: the new jobs' data, and what
  collapses add to the data they replace, would pass it)
Costs of the quotas: nothing for the admin (the counts live in meta); a publish token's call 3
  commands more with both rate limits (MGET of `rate` and `token-rate`, then SET or INCRBY of
  each), none with '2'; once per queue created before `live`, 4.
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include insert
-- @include job-ops
-- @include dedup
-- @include reserve
-- @include quota
-- @include publish-rate
-- @include partition
-- @include expiry
-- @include events

local now, r, n, published = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] ~= ''
-- ARGV fields of job i start after 5 + (i - 1) * 6. (Constants are written out where they are
-- used: the script is near Lua's 200 locals.)
local function arg(i, field) return ARGV[5 + (i - 1) * 6 + field] end

local groupFields = {}
for i = 1, n do groupFields[i] = groupField(arg(i, 2)) end

local M = openMeta(KEYS[1], groupFields)
for i = 1, n do checkPartition(M, arg(i, 2)) end
if not M.cfg then return { QUEUE_NOT_FOUND } end
if (tonumber(ARGV[5]) or 0) > (tonumber(M.v.ev) or 0) then metaSet(M, 'ev', int(tonumber(ARGV[5]))) end
openEvents(M, now)
local cfg = M.cfg
local maxDelay = maxDelayOf(cfg)
local maxData, maxDataName = maxDataOf(cfg, published)
for i = 1, n do
  if #arg(i, 5) > maxData then return { PAYLOAD_TOO_LARGE, i, maxData, maxDataName } end
  if tonumber(arg(i, 4)) - now > maxDelay then return { DELAY_TOO_LONG, i, maxDelay } end
end
local rate = nil -- what takeRates spends once every check passed
if ARGV[4] == '1' then
  local refused
  refused, rate = checkRates(publishWindows(cfg, KEYS[15], KEYS[17]), n)
  if refused then return refused end
end

local K = {
  jobs = KEYS[2], ready = KEYS[3], delayed = KEYS[4], active = KEYS[5], held = KEYS[6],
  pausedGroups = KEYS[7], prioritized = KEYS[8], starts = KEYS[9], debounce = KEYS[10], dedup = KEYS[11],
  completed = KEYS[12], failed = KEYS[13], cancelled = KEYS[14], expiring = KEYS[16],
}
local G = 17 -- job i's group key is KEYS[G + i]
local firstSeq = metaNum(M, 'seq') + 1
local states = {}
for i = 1, n do
  local options = arg(i, 6)
  states[i] = newJobState(now, arg(i, 2), firstSeq + i - 1, tonumber(arg(i, 3)), tonumber(arg(i, 4)),
    options ~= '' and cjson.decode(options))
end
local reserving = r > 0 and not M.v.paused
local B, out = newBatch(M, now), {}
B.reserving = reserving
B.link = true -- one ZADD per group key and call (group.lua addToGroup)

-- When job i asks to start (runAt 0: now).
local function runAtOf(i)
  return math.max(tonumber(arg(i, 4)), now)
end

-- The job each debounce key of this call may collapse into: key -> {id, state, data, from},
-- for a key that maps to a job that has not started (`from`: delayed, or waiting and not
-- leased).
local function debounceTargets()
  local keys, seen = {}, {}
  for _, state in ipairs(states) do
    if state.db and not seen[state.db] then
      seen[state.db] = true
      keys[#keys + 1] = state.db
    end
  end
  local targets, ids, keyOf = {}, {}, {}
  if #keys == 0 then return targets end
  for j, id in ipairs(redis.call('HMGET', K.debounce, unpack(keys))) do
    if id then
      ids[#ids + 1] = id
      keyOf[#ids] = keys[j]
    end
  end
  if #ids == 0 then return targets end
  for j, raw in ipairs(redis.call('HMGET', K.jobs, unpack(ids))) do
    local id = ids[j]
    local state, data
    if raw then state, data = decodeJob(raw) end
    if state and state.db == keyOf[j] then
      local from = state.st
      if not from and not redis.call('ZSCORE', K.active, leaseMember(leaseToken(M, id, state), id, state.g)) then
        from = 'waiting'
      end
      if from == 'waiting' or from == 'delayed' then
        targets[keyOf[j]] = { id = id, state = state, data = data, from = from, size = #data } -- size: its data as counted (bytes.lua)
      end
    end
  end
  return targets
end

-- Job i collapses into `target`: its data replace the target's, and the target starts when job
-- i asks, but never later than the target's first enqueue allowed.
local function collapse(target, i)
  target.data = arg(i, 5)
  target.runAt = math.min(runAtOf(i), target.state.dx or math.huge)
  target.groupKey = KEYS[G + i] -- the same group's key
end

-- Moves a job that existed before this call to the start its collapses set: a waiting job that
-- must start later leaves its group for `delayed`, a delayed one due now joins its group.
local function moveCollapsed(t)
  local delay = t.runAt > now
  if t.from == 'waiting' and delay then detachWaiting(K, B, t.groupKey, t.id, t.state) end
  if t.from == 'delayed' and not delay then redis.call('ZREM', K.delayed, delayedMember(t.id, t.state.g)) end
  setStart(t.state, t.runAt, now)
  B.fresh[#B.fresh + 1] = t.id
  B.fresh[#B.fresh + 1] = encodeJob(t.state, t.data)
  t.placed = 'waiting'
  if delay or t.from == 'delayed' then t.placed = placeJob(K, B, t.groupKey, t.id, t.state) end
  if t.placed ~= t.from then noteAdded(M, t.id, t.state, now) end
end

if n == 1 and not states[1].db then
  -- One job: HSETNX checks the id and writes the record in one command.
  local id, state, data = arg(1, 1), states[1], arg(1, 5)
  local ended = rememberedEnds(K, M, { id }, states, now)[1]
  if ended then
    takeRates(rate) -- every job a publish token sends counts, a duplicate too
    local kept = redis.call('HGET', K.jobs, id) -- retried by hand since it ended: its state now
    return { 1, { { id, kept and stateOfExisting(K, M, id, kept) or ended, 1 } }, M.v.config, {}, -1 }
  end
  -- Full: refused, unless the id is known (HSETNX then answers it as a duplicate, writing nothing).
  local full = queueFull(K, M, cfg, 1, published, #data)
  if full and redis.call('HEXISTS', K.jobs, id) == 0 then return full end
  takeRates(rate)
  local record = encodeJob(state, data)
  if redis.call('HSETNX', K.jobs, id, record) == 0 then
    return { 1, { { id, stateOfExisting(K, M, id, redis.call('HGET', K.jobs, id)), 1 } }, M.v.config, {}, -1 }
  end
  metaSet(M, 'seq', int(firstSeq))
  countJobs(M, 1)
  -- Solo: nothing else could be reserved before it (nothing ready, no paused group to skip),
  -- there is room, and its group has no job: it is leased at once.
  local solo = reserving and not state.st and groupJobs(M, state.g) == 0 and metaNum(M, 'ready') == 0
    and metaNum(M, 'pausedGroups') == 0 and metaNum(M, 'active') < cfg.concurrency
    and state.o + cfg.orderingWindowMs <= now and not isFlow(M, state.g) and type(cfg.rateLimit) ~= 'table'
    and metaNum(M, 'hold') <= now and not (Batch.config(M) and (cfg.batch.maxWaitMs or 0) > 0)
  if solo then
    addGroupJobs(M, state.g, 1)
    local deadline = now + leaseMsOf(state, cfg)
    local token = leaseToken(M, id, state)
    redis.call('ZADD', K.active, deadline, leaseMember(token, id, state.g))
    metaAdd(M, 'active', 1)
    observeWait(M, state, now)
    noteTimer(M, deadline)
    -- The events before saveMeta, which numbers them (meta.lua placeEvents).
    noteAdded(M, id, state, now)
    noteEvent(M, 'active', id, state.g, 'active', 1, now)
    saveMeta(M)
    local stateJson = string.sub(record, 1, #record - #data - 1)
    return { 1, { { id, 'waiting', 0 } }, M.v.config, { { id, stateJson, data, deadline, 's', token, messageIdFor(M, id, state) } }, dueReport(M, now), M.events }
  end
  countWaiting(M, id, 1, #data) -- not leased solo: it waits
  out[1] = { id, placeJob(K, B, KEYS[G + 1], id, state), 0 }
  noteAdded(M, id, state, now)
  noteExpiry(B, id, state)
else
  local ids = {}
  for i = 1, n do ids[i] = arg(i, 1) end
  local existing = redis.call('HMGET', K.jobs, unpack(ids))
  local ended = rememberedEnds(K, M, ids, states, now)
  local targets = debounceTargets()
  -- New jobs are written once every job of the call is known: a later job may collapse into one.
  local created, made, collapsed = {}, {}, {}
  for i = 1, n do
    local id, state = ids[i], states[i]
    local target = state.db and targets[state.db]
    if existing[i] then
      out[i] = { id, stateOfExisting(K, M, id, existing[i]), 1 }
    elseif created[id] then
      out[i] = { created[id], 1 } -- the same id twice in one call
    elseif ended[i] then
      out[i] = { id, ended[i], 1 }
    elseif target and target.state.g == state.g then
      if target.from and not target.groupKey then collapsed[#collapsed + 1] = target end
      collapse(target, i)
      out[i] = { target, 2 }
    else
      -- A key mapped to a job of another group (whose key this call cannot touch) moves to this one.
      local job = { id = id, state = state, data = arg(i, 5), runAt = runAtOf(i), groupKey = KEYS[G + i] }
      made[#made + 1] = job
      created[id] = job
      if state.db then targets[state.db] = job end
      out[i] = { job, 0 }
    end
  end
  local bytes, grown = 0, 0
  for _, job in ipairs(made) do bytes = bytes + #job.data end
  for _, target in ipairs(collapsed) do grown = grown + #target.data - target.size end -- data replaced
  local full = queueFull(K, M, cfg, #made, published, bytes + grown)
  if full then return full end
  takeRates(rate)
  countJobs(M, #made)
  for _, job in ipairs(made) do
    if isPublished(job.id) then countPublished(M, 1) end -- its bytes are counted below, with the others'
  end
  local keys = {}
  for _, job in ipairs(made) do
    setStart(job.state, job.runAt, now)
    B.fresh[#B.fresh + 1] = job.id
    B.fresh[#B.fresh + 1] = encodeJob(job.state, job.data)
    job.placed = placeJob(K, B, job.groupKey, job.id, job.state)
    noteAdded(M, job.id, job.state, now)
    noteExpiry(B, job.id, job.state)
    if job.state.db then
      keys[#keys + 1] = job.state.db
      keys[#keys + 1] = job.id
    end
  end
  countBytes(M, bytes)
  for _, target in ipairs(collapsed) do
    moveCollapsed(target)
    countBytes(M, #target.data - target.size)
  end
  for i, o in ipairs(out) do
    if #o == 2 then out[i] = { o[1].id, o[1].placed, o[2] } end
  end
  if #keys > 0 then redis.call('HSET', K.debounce, unpack(keys)) end
  metaSet(M, 'seq', int(firstSeq + n - 1))
end

saveExpiries(K, B)
flushBatch(K, B)
local jobs = {}
if reserving then jobs = reserveJobs(K, M, r, now) end
saveMeta(M)
return { 1, out, M.v.config, jobs, dueReport(M, now), M.events }
