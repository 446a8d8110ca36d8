--[[ enqueue: adds a batch of jobs (one or more) to a queue, all or nothing, then optionally
reserves up to N ready jobs in the same call: the Worker's enqueue hands them straight to its
dispatcher, so a job on an idle queue costs no separate reserve round trip.
Idempotent by id: a job whose id exists is not touched and is reported as a duplicate.

KEYS[1]    meta      hash  queue config, paused flag, enqueue sequence
KEYS[2]    jobs      hash  id -> job record
KEYS[3]    ready     zset  idle group heads by orderMs (+ the ~timers marker)
KEYS[4]    delayed   zset  delayed job ids by runAt
KEYS[5]    active    zset  leased job ids by lease deadline
KEYS[6]    held      zset  group -> release time (+inf: paused)
KEYS[7]    paused-groups  set  paused group names
KEYS[7+i]  the group zset of job i

ARGV[1]  now (epoch ms)
ARGV[2]  seed (random hex; lease tokens derive from it)
ARGV[3]  r, how many ready jobs to reserve after adding (0: none)
ARGV[4]  n, the number of jobs; then 6 fields per job:
         id, group, orderMs (epoch ms), runAt (epoch ms, 0 = now), data (JSON text),
         options (JSON object of per-job state fields, e.g. {"ma":5}, or '')

Returns {1, {{id, state, duplicate 0|1}...}, config JSON, {{id, state JSON, data, lease deadline}...}}
  (the last two as settle returns them; no jobs when r is 0)
Errors  {-1} QUEUE_NOT_FOUND; {-5, i, limit} PAYLOAD_TOO_LARGE for job i (nothing written)
]]
-- @include job
-- @include group
-- @include insert
-- @include reserve

local now, seed, r, n = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local F = 4 -- ARGV fields of job i start after F + (i - 1) * 6

local meta = redis.call('HMGET', KEYS[1], 'config', 'paused', 'pausedGroups')
if not meta[1] then return { -1 } end
local cfg = cjson.decode(meta[1])
for i = 1, n do
  local data = ARGV[F + (i - 1) * 6 + 5]
  if #data > cfg.maxPayloadBytes then return { -5, i, cfg.maxPayloadBytes } end
end

local K = {
  jobs = KEYS[2], ready = KEYS[3], delayed = KEYS[4], active = KEYS[5], held = KEYS[6],
  pausedGroups = KEYS[7],
}
local lastSeq = redis.call('HINCRBY', KEYS[1], 'seq', n)
local ids = {}
for i = 1, n do ids[i] = ARGV[F + (i - 1) * 6 + 1] end
local existing = redis.call('HMGET', K.jobs, unpack(ids))

local B, created, out, records = newBatch(), {}, {}, {}
for i = 1, n do
  local b = F + (i - 1) * 6
  local id, options = ids[i], ARGV[b + 6]
  if existing[i] then
    out[i] = { id, stateOfExisting(K, id, existing[i]), 1 }
  elseif created[id] then
    out[i] = { id, out[created[id]][2], 1 } -- the same id twice in one batch
  else
    local state, record = insertJob(K, B, KEYS[7 + i], lastSeq - n + i, seed, now, id, ARGV[b + 2],
      tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), ARGV[b + 5], options ~= '' and cjson.decode(options))
    created[id] = i
    records[id] = record
    out[i] = { id, state, 0 }
  end
end
-- The common case of a job enqueued alone on a quiet queue: it is the only new head and no other
-- head is due, so a reservation could only pick it. It is leased straight from the batch and
-- never enters `ready` (no write and removal there, no reading its record back). Returns the
-- leased jobs, or nil when the usual reservation must decide.
local function leaseLoneHead()
  local groupKey, entry = next(B.ready)
  if not groupKey or next(B.ready, groupKey) ~= nil then return nil end
  local cutoff = now - cfg.orderingWindowMs
  if entry[1] > cutoff then return nil end
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', K.ready, '-inf', cutoff, 'LIMIT', 0, 2)) do
    if m ~= TIMERS then return nil end
  end
  if redis.call('ZCARD', K.active) >= cfg.concurrency then return {} end
  B.ready[groupKey] = nil
  local id = idOf(entry[2])
  local record = records[id]
  local nl = string.find(record, '\n', 1, true)
  local stateJson = string.sub(record, 1, nl - 1)
  local deadline = now + leaseMsOf(cjson.decode(stateJson), cfg)
  redis.call('ZADD', K.active, deadline, id)
  batchTimer(B, deadline) -- the lease's deadline is a timer of the queue (see tick.lua)
  return { { id, stateJson, string.sub(record, nl + 1), deadline } }
end

local jobs
local reserving = r > 0 and not meta[2]
if reserving and tonumber(meta[3] or '0') == 0 then jobs = leaseLoneHead() end
flushBatch(K, B)
if reserving and not jobs then jobs = reserveJobs(K, cfg, tonumber(meta[3] or '0'), r, now) end
return { 1, out, meta[1], jobs or {} }
