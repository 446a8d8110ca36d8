#!lua flags=allow-key-locking
--[[ update-job: changes a waiting or delayed job's data and/or delay.
delayMs counts from now: a waiting job with delayMs > 0 leaves its group and becomes delayed;
delayMs 0 on a delayed job promotes it.

KEYS[1] meta     hash  config and counters (meta.lua)
KEYS[2] jobs     hash  id -> job record
KEYS[3] ready    zset  idle group heads
KEYS[4] active   zset  lease members (an active job cannot be changed)
KEYS[5] held     zset  group -> release time
KEYS[6] delayed  zset  '<id> <group>' by runAt
KEYS[7] prioritized zset idle group heads with a priority
KEYS[8] group    zset  the job's group (the caller read it with job-group)

ARGV[1] now (epoch ms)
ARGV[2] id
ARGV[3] data (JSON text; '' = unchanged)
ARGV[4] delayMs (-1 = unchanged)
ARGV[5] the job's group

Returns {1, job view (view.lua), dueAt, events?}: events, an `added` when the job moved between
  waiting and delayed (events.lua, only while meta's `ev` is later than now)
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND, {-4, state} INVALID_STATE (not waiting/delayed),
        {-5, 1, limit} PAYLOAD_TOO_LARGE, {-10, group} JOB_CHANGED_GROUP (the job's group is another one),
        {-14, 1, maxDelayMs} DELAY_TOO_LONG (delayMs past the queue's maxDelayMs),
        {-12, maxBytes, 'maxBytes'} QUEUE_FULL (larger data would pass the queue's maxBytes)
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include job-ops
-- @include quota
-- @include view
-- @include events

local K = { jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], delayed = KEYS[6], prioritized = KEYS[7] }
local now, id, newData, delayMs = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
local M, raw, err = loadJob(KEYS[1], K.jobs, id, { groupField(ARGV[5]) })
if err then return err end
openEvents(M, now)
local cfg = M.cfg
local state, data = decodeJob(raw)
if state.g ~= ARGV[5] then return { JOB_CHANGED_GROUP, state.g } end
local waiting = not state.st and not redis.call('ZSCORE', K.active, leaseMember(leaseToken(M, id, state), id, state.g))
if not waiting and state.st ~= 'delayed' then return { INVALID_STATE, state.st or 'active' } end
if #newData > cfg.maxPayloadBytes then return { PAYLOAD_TOO_LARGE, 1, cfg.maxPayloadBytes } end
if delayMs > maxDelayOf(cfg) then return { DELAY_TOO_LONG, 1, maxDelayOf(cfg) } end
if newData ~= '' then
  local full = queueFull(K, M, cfg, 0, false, #newData - #data) -- a larger data counts against maxBytes
  if full then return full end
end
if newData ~= '' then
  countBytes(M, #newData - #data) -- a waiting job's data replaced (bytes.lua)
  data = newData
end

local B, record = newBatch(M, now), nil
if delayMs > 0 then
  if waiting then detachWaiting(K, B, KEYS[8], id, state) end
  state.st, state.ra = 'delayed', now + delayMs
  redis.call('ZADD', K.delayed, state.ra, delayedMember(id, state.g))
  noteTimer(M, state.ra)
  if waiting then noteAdded(M, id, state, now) end
elseif delayMs == 0 and not waiting then
  redis.call('ZREM', K.delayed, delayedMember(id, state.g))
  record = attachWaiting(K, B, KEYS[8], id, state, data)
  noteAdded(M, id, state, now)
end
if not record then
  record = encodeJob(state, data)
  redis.call('HSET', K.jobs, id, record)
end
flushBatch(K, B)
saveMeta(M)
return { 1, jobView(K, M, id, record, true), dueReport(M, now), M.events }
