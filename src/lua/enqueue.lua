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

local B, created, out = newBatch(), {}, {}
for i = 1, n do
  local b = F + (i - 1) * 6
  local id, options = ids[i], ARGV[b + 6]
  if existing[i] then
    out[i] = { id, stateOfExisting(K, id, existing[i]), 1 }
  elseif created[id] then
    out[i] = { id, out[created[id]][2], 1 } -- the same id twice in one batch
  else
    local state = insertJob(K, B, KEYS[7 + i], lastSeq - n + i, seed, now, id, ARGV[b + 2],
      tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), ARGV[b + 5], options ~= '' and cjson.decode(options))
    created[id] = i
    out[i] = { id, state, 0 }
  end
end
flushBatch(K, B)

local jobs = {}
if r > 0 and not meta[2] then jobs = reserveJobs(K, cfg, tonumber(meta[3] or '0'), r, now) end
return { 1, out, meta[1], jobs }
