#!lua flags=allow-key-locking
--[[ remove-job: deletes a job that is not active. A waiting job leaves its group (its next job
becomes the head); a delayed, completed, failed, cancelled or expired one leaves its zset. A waiting or
delayed job ends `removed`: the dedup window remembers it when its producer named it (a finished
one was remembered when it ended), and its debounce key is freed.

KEYS[1]  meta           hash  config and counters (meta.lua)
KEYS[2]  jobs           hash  id -> job record
KEYS[3]  ready          zset  idle group heads
KEYS[4]  active         zset  lease members (an active job cannot be removed)
KEYS[5]  held           zset  group -> release time
KEYS[6]  delayed        zset  '<id> <group>' by runAt
KEYS[7]  completed      zset  kept completed ids
KEYS[8]  failed         zset  kept failed ids
KEYS[9]  cancelled      zset  kept cancelled ids
KEYS[10] prioritized    zset  idle group heads with a priority
KEYS[11] dedup          zset  ids of ended jobs remembered by the dedup window (dedup.lua)
KEYS[12] debounce       hash  debounce key -> job id (debounce.lua)
KEYS[13] group          zset  the job's group (the caller read it with job-group)
KEYS[14] expired        zset  kept expired ids
KEYS[15] expiring       zset  TTL jobs not started (a removed one's entry goes, expiry.lua)

ARGV[1] id
ARGV[2] the job's group
ARGV[3] now (epoch ms)

Returns {1, dueAt}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND, {-4, 'active'} INVALID_STATE,
        {-10, group} JOB_CHANGED_GROUP: the job's group is another one; call again with it declared
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include job-ops
-- @include debounce
-- @include quota
-- @include expiry

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], prioritized = KEYS[10], dedup = KEYS[11],
  debounce = KEYS[12], expiring = KEYS[15],
}
local id, now = ARGV[1], tonumber(ARGV[3])
local M = openMeta(KEYS[1], { groupField(ARGV[2]) })
if not M.cfg then return { QUEUE_NOT_FOUND } end
local raw = redis.call('HGET', K.jobs, id)
if not raw then return { JOB_NOT_FOUND } end
local state, data = decodeJob(raw)
if state.g ~= ARGV[2] then return { JOB_CHANGED_GROUP, state.g } end
local B = newBatch(M, now)
if state.st == 'delayed' then
  redis.call('ZREM', KEYS[6], delayedMember(id, state.g))
elseif state.st then
  redis.call('ZREM', ({ completed = KEYS[7], failed = KEYS[8], cancelled = KEYS[9], expired = KEYS[14] })[state.st], id)
elseif redis.call('ZSCORE', K.active, leaseMember(leaseToken(M, id, state), id, state.g)) then
  return { INVALID_STATE, 'active' }
else
  detachWaiting(K, B, KEYS[13], id, state)
end
if not state.st or state.st == 'delayed' then -- it had not finished: it ends here
  releaseDebounce(K, id, state)
  if state.x then dropExpiries(K, { delayedMember(id, state.g) }) end
  if state.i then noteEnded(B, id, 'removed', now) end
  countJobs(M, -1)
  countWaiting(M, id, -1, #data) -- it waited (bytes.lua)
end
flushBatch(K, B)
redis.call('HDEL', K.jobs, id)
saveMeta(M)
return { 1, dueReport(M, now) }
