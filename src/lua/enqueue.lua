#!lua flags=allow-key-locking
--[[ enqueue: adds a batch of jobs (one or more) to a queue, all or nothing, then optionally
reserves up to N ready jobs in the same call: the Worker's enqueue hands them straight to its
dispatcher, so a job on an idle queue costs no separate reserve round trip.
Idempotent by id: a job whose id exists is not touched and is reported as a duplicate.
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
KEYS[10]   debounce       hash  debounce key -> job id
KEYS[10+i] group          zset  the group zset of job i

ARGV[1]  now (epoch ms)
ARGV[2]  r, how many ready jobs to reserve after adding (0: none)
ARGV[3]  n, the number of jobs; then 6 fields per job:
         id, group, orderMs (epoch ms), runAt (epoch ms, 0 = now), data (JSON text),
         options (JSON object of per-job state fields, e.g. {"ma":5}, or '')

Returns {1, {{id, state, duplicate 0|1}...}, config JSON, {{id, state JSON, data, lease deadline, hint, token}...}, dueAt}
  (leased jobs as settle returns them, none when r is 0; dueAt: lower the queue's due-index
  entry to this, -1 = nothing to do)
Errors  {-1} QUEUE_NOT_FOUND; {-5, i, limit} PAYLOAD_TOO_LARGE for job i (nothing written)
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include insert
-- @include reserve

local now, r, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local F = 3 -- ARGV fields of job i start after F + (i - 1) * 6
local function arg(i, field) return ARGV[F + (i - 1) * 6 + field] end

local groupFields = {}
for i = 1, n do groupFields[i] = groupField(arg(i, 2)) end
local M = openMeta(KEYS[1], groupFields)
if not M.cfg then return { QUEUE_NOT_FOUND } end
local cfg = M.cfg
for i = 1, n do
  if #arg(i, 5) > cfg.maxPayloadBytes then return { PAYLOAD_TOO_LARGE, i, cfg.maxPayloadBytes } end
end

local K = {
  jobs = KEYS[2], ready = KEYS[3], delayed = KEYS[4], active = KEYS[5], held = KEYS[6],
  pausedGroups = KEYS[7], prioritized = KEYS[8], starts = KEYS[9], debounce = KEYS[10],
}
local firstSeq = metaNum(M, 'seq') + 1
local function stateOf(i)
  local options = arg(i, 6)
  return newJobState(now, arg(i, 2), firstSeq + i - 1, tonumber(arg(i, 3)), tonumber(arg(i, 4)),
    options ~= '' and cjson.decode(options))
end
local reserving = r > 0 and not M.v.paused
local B, out = newBatch(M, now), {}
B.reserving = reserving

if n == 1 then
  -- One job: HSETNX checks the id and writes the record in one command.
  local id, state, data = arg(1, 1), stateOf(1), arg(1, 5)
  local record = encodeJob(state, data)
  if redis.call('HSETNX', K.jobs, id, record) == 0 then
    return { 1, { { id, stateOfExisting(K, M, id, redis.call('HGET', K.jobs, id)), 1 } }, M.v.config, {}, -1 }
  end
  metaSet(M, 'seq', int(firstSeq))
  -- Solo: nothing else could be reserved before it (nothing ready, no paused group to skip),
  -- there is room, and its group has no job: it is leased at once.
  local solo = reserving and not state.st and groupJobs(M, state.g) == 0 and metaNum(M, 'ready') == 0
    and metaNum(M, 'pausedGroups') == 0 and metaNum(M, 'active') < cfg.concurrency
    and state.o + cfg.orderingWindowMs <= now and not isFlow(M, state.g) and type(cfg.rateLimit) ~= 'table'
    and metaNum(M, 'hold') <= now
  if solo then
    addGroupJobs(M, state.g, 1)
    local deadline = now + leaseMsOf(state, cfg)
    local token = leaseToken(M, id, state)
    redis.call('ZADD', K.active, deadline, leaseMember(token, id, state.g))
    metaAdd(M, 'active', 1)
    noteTimer(M, deadline)
    saveMeta(M)
    local stateJson = string.sub(record, 1, #record - #data - 1)
    return { 1, { { id, 'waiting', 0 } }, M.v.config, { { id, stateJson, data, deadline, 's', token } }, dueReport(M, now) }
  end
  out[1] = { id, placeJob(K, B, KEYS[11], id, state), 0 }
else
  local ids = {}
  for i = 1, n do ids[i] = arg(i, 1) end
  local existing = redis.call('HMGET', K.jobs, unpack(ids))
  local created = {}
  for i = 1, n do
    local id = ids[i]
    if existing[i] then
      out[i] = { id, stateOfExisting(K, M, id, existing[i]), 1 }
    elseif created[id] then
      out[i] = { id, out[created[id]][2], 1 } -- the same id twice in one batch
    else
      local state = stateOf(i)
      B.fresh[#B.fresh + 1] = id
      B.fresh[#B.fresh + 1] = encodeJob(state, arg(i, 5))
      created[id] = i
      out[i] = { id, placeJob(K, B, KEYS[10 + i], id, state), 0 }
    end
  end
  metaSet(M, 'seq', int(firstSeq + n - 1))
end

flushBatch(K, B)
local jobs = {}
if reserving then jobs = reserveJobs(K, M, r, now) end
saveMeta(M)
return { 1, out, M.v.config, jobs, dueReport(M, now) }
