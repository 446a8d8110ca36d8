--[[ commit-repeat: creates the due run of a repeatable job and moves it to its next run, with
compare-and-set on the spec's version and run time, so racing schedulers create each run once
and a replaced spec is never committed with what was read before. The run is an ordinary job
with the id `repeat:{key}:{runAtMs}`; an existing id is never enqueued twice.

KEYS[1] meta        hash  config, enqueue sequence
KEYS[2] jobs        hash  id -> job record
KEYS[3] ready       zset  idle group heads (+ ~timers marker)
KEYS[4] delayed     zset  delayed job ids by runAt
KEYS[5] active      zset  leased job ids (read for a duplicate's state)
KEYS[6] repeats     hash  repeat key -> spec JSON
KEYS[7] repeat-due  zset  repeat key -> next run (epoch ms)
KEYS[8] the group zset of the repeat's group, as the caller read it

ARGV[1] now (epoch ms)
ARGV[2] seed (random hex, for the lease token)
ARGV[3] repeat key
ARGV[4] the spec version the caller read (`v`)
ARGV[5] the run time the caller read (epoch ms)
ARGV[6] the run after it (epoch ms; -1 = no more runs)

Returns {1, job id, state, duplicate 0|1}; {0} when the run was committed by someone else, or
the spec changed since the caller read it
Errors  {-1} QUEUE_NOT_FOUND, {-7} REPEAT_NOT_FOUND
]]
-- @include job
-- @include group
-- @include insert

local K = { meta = KEYS[1], jobs = KEYS[2], ready = KEYS[3], delayed = KEYS[4], active = KEYS[5] }
local repeatsKey, dueKey, groupKey = KEYS[6], KEYS[7], KEYS[8]
local now, seed, key = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local version, runAt, nextRunAt = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

if redis.call('HEXISTS', K.meta, 'config') == 0 then return { -1 } end
local specJson = redis.call('HGET', repeatsKey, key)
if not specJson then return { -7 } end
local spec = cjson.decode(specJson)
if spec.v ~= version or spec.nextRunAt ~= runAt then return { 0 } end

local id = 'repeat:' .. key .. ':' .. string.format('%d', runAt)
local existing = redis.call('HGET', K.jobs, id)
local state
if existing then
  state = stateOfExisting(K, id, existing)
else
  local B = newBatch()
  local options = now ~= runAt and { c = now } or nil
  state = insertJob(K, B, groupKey, redis.call('HINCRBY', K.meta, 'seq', 1), seed, now, id,
    spec.group, runAt, 0, spec.data, options)
  flushBatch(K, B)
  spec.count = spec.count + 1
end

if spec.limit and spec.count >= spec.limit then nextRunAt = -1 end
if nextRunAt >= 0 then
  spec.nextRunAt = nextRunAt
  redis.call('ZADD', dueKey, nextRunAt, key)
  noteTimer(K.ready, nextRunAt)
else
  spec.nextRunAt = nil
  redis.call('ZREM', dueKey, key)
end
redis.call('HSET', repeatsKey, key, cjson.encode(spec))
return { 1, id, state, existing and 1 or 0 }
