--[[ remove-job: deletes a job that is not active.

KEYS[1] meta       hash  config
KEYS[2] jobs       hash  id -> job record
KEYS[3] ready      zset  idle group heads
KEYS[4] active     zset  leased job ids
KEYS[5] held       zset  held or parked groups
KEYS[6] delayed    zset  delayed job ids
KEYS[7] completed  zset  kept completed ids
KEYS[8] failed     zset  kept failed ids

ARGV[1] id

Returns {1}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND, {-4} INVALID_STATE (active)
]]
-- @include job
-- @include group
-- @include job-ops

local K = {
  jobs = KEYS[2], ready = KEYS[3], held = KEYS[5], delayed = KEYS[6],
  prefix = string.sub(KEYS[1], 1, -5),
}
local id = ARGV[1]
if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return { -1 } end
local raw = redis.call('HGET', K.jobs, id)
if not raw then return { -2 } end
local state = decodeJob(raw)
if state.st then
  redis.call('ZREM', ({ delayed = KEYS[6], completed = KEYS[7], failed = KEYS[8] })[state.st], id)
elseif redis.call('ZSCORE', KEYS[4], id) then
  return { -4 }
else
  local B = newBatch()
  detachWaiting(K, B, id, state)
  flushBatch(K, B)
end
redis.call('HDEL', K.jobs, id)
return { 1 }
