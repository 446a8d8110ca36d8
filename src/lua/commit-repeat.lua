--[[ commit-repeat: creates the due run of a repeatable job and moves it to its next run, with
compare-and-set on the run time, so racing schedulers create each run once. The run is an
ordinary job with the id `repeat:{key}:{runAtMs}`; an existing id is never enqueued twice.

KEYS[1] meta        hash  config, enqueue sequence
KEYS[2] jobs        hash  id -> job record
KEYS[3] ready       zset  idle group heads (+ ~timers marker)
KEYS[4] delayed     zset  delayed job ids by runAt
KEYS[5] active      zset  leased job ids (read for a duplicate's state)
KEYS[6] repeats     hash  repeat key -> spec JSON
KEYS[7] repeat-due  zset  repeat key -> next run (epoch ms)
KEYS[8] the group zset of the repeat's group

ARGV[1] now (epoch ms)
ARGV[2] seed (random hex, for the lease token)
ARGV[3] repeat key
ARGV[4] the run time the caller saw (epoch ms): the compare-and-set value
ARGV[5] the run after it (epoch ms; -1 = no more runs)

Returns {1, job id, state, duplicate 0|1}; {0} when the run was committed by someone else
Errors  {-1} QUEUE_NOT_FOUND, {-7} REPEAT_NOT_FOUND
]]
-- @include job
-- @include group
-- @include insert

local K = { jobs = KEYS[2], ready = KEYS[3], delayed = KEYS[4], active = KEYS[5] }
local now, seed, key = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local runAt, nextRunAt = tonumber(ARGV[4]), tonumber(ARGV[5])

if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return { -1 } end
local specJson = redis.call('HGET', KEYS[6], key)
if not specJson then return { -7 } end
local spec = cjson.decode(specJson)
if spec.nextRunAt ~= runAt then return { 0 } end

local id = 'repeat:' .. key .. ':' .. string.format('%d', runAt)
local existing = redis.call('HGET', K.jobs, id)
local state, duplicate = nil, existing ~= false
if existing then
  state = stateOfExisting(K, id, existing)
else
  local B = newBatch()
  state = insertJob(K, B, KEYS[8], redis.call('HINCRBY', KEYS[1], 'seq', 1), seed, now, id,
    spec.group, runAt, 0, spec.data, { c = now })
  flushBatch(K, B)
  spec.count = spec.count + 1
end

if nextRunAt >= 0 then
  spec.nextRunAt = nextRunAt
  redis.call('ZADD', KEYS[7], nextRunAt, key)
  noteTimer(K.ready, nextRunAt)
else
  spec.nextRunAt = nil
  redis.call('ZREM', KEYS[7], key)
end
redis.call('HSET', KEYS[6], key, cjson.encode(spec))
return { 1, id, state, duplicate and 1 or 0 }
