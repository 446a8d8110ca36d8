--[[ enqueue: adds a batch of jobs (one or more) to a queue, all or nothing.
Idempotent by id: a job whose id exists is not touched and is reported as a duplicate.

KEYS[1]    meta      hash  queue config, paused flag, enqueue sequence
KEYS[2]    jobs      hash  id -> job record
KEYS[3]    ready     zset  idle group heads by orderMs (+ the ~timers marker)
KEYS[4]    delayed   zset  delayed job ids by runAt
KEYS[5]    active    zset  leased job ids by lease deadline (read for duplicates' state)
KEYS[5+i]  the group zset of job i

ARGV[1]  now (epoch ms)
ARGV[2]  seed (random hex; lease tokens derive from it)
ARGV[3]  n, the number of jobs; then 6 fields per job:
         id, group, orderMs (epoch ms), runAt (epoch ms, 0 = now), data (JSON text),
         options (JSON object of per-job state fields, e.g. {"ma":5}, or '')

Returns {1, {id, state, duplicate 0|1}...}
Errors  {-1} QUEUE_NOT_FOUND; {-5, i, limit} PAYLOAD_TOO_LARGE for job i (nothing written)
]]
-- @include job
-- @include group
-- @include insert

local now, seed, n = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])

local cfgJson = redis.call('HGET', KEYS[1], 'config')
if not cfgJson then return { -1 } end
local cfg = cjson.decode(cfgJson)
for i = 1, n do
  local data = ARGV[3 + (i - 1) * 6 + 5]
  if #data > cfg.maxPayloadBytes then return { -5, i, cfg.maxPayloadBytes } end
end

local K = { jobs = KEYS[2], ready = KEYS[3], delayed = KEYS[4], active = KEYS[5] }
local lastSeq = redis.call('HINCRBY', KEYS[1], 'seq', n)
local ids = {}
for i = 1, n do ids[i] = ARGV[3 + (i - 1) * 6 + 1] end
local existing = redis.call('HMGET', K.jobs, unpack(ids))

local B, created, out = newBatch(), {}, {}
for i = 1, n do
  local b = 3 + (i - 1) * 6
  local id, options = ids[i], ARGV[b + 6]
  if existing[i] then
    out[i] = { id, stateOfExisting(K, id, existing[i]), 1 }
  elseif created[id] then
    out[i] = { id, out[created[id]][2], 1 } -- the same id twice in one batch
  else
    local state = insertJob(K, B, KEYS[5 + i], lastSeq - n + i, seed, now, id, ARGV[b + 2],
      tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), ARGV[b + 5], options ~= '' and cjson.decode(options))
    created[id] = i
    out[i] = { id, state, 0 }
  end
end
flushBatch(K, B)
return { 1, out }
