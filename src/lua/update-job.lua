--[[ update-job: changes a waiting or delayed job's data and/or delay.
delayMs counts from now: a waiting job with delayMs > 0 leaves its group and becomes delayed;
delayMs 0 on a delayed job promotes it.

KEYS[1] meta     hash  config
KEYS[2] jobs     hash  id -> job record
KEYS[3] ready    zset  idle group heads (+ ~timers marker)
KEYS[4] active   zset  leased job ids
KEYS[5] held     zset  held or parked groups
KEYS[6] delayed  zset  delayed job ids by runAt

ARGV[1] now (epoch ms)
ARGV[2] id
ARGV[3] data (JSON text; '' = unchanged)
ARGV[4] delayMs (-1 = unchanged)

Returns {1, {id, state JSON, data, state, startedAt, expiresAt, maxAttempts}}
Errors  {-1} QUEUE_NOT_FOUND, {-2} JOB_NOT_FOUND, {-4} INVALID_STATE (not waiting/delayed),
        {-5, 1, limit} PAYLOAD_TOO_LARGE
]]
-- @include job
-- @include group
-- @include job-ops
-- @include view

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], delayed = KEYS[6],
  prefix = string.sub(KEYS[1], 1, -5),
}
local now, id, newData, delayMs = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
local cfg, raw, err = loadJob(KEYS[1], K.jobs, id)
if err then return err end
local state, data = decodeJob(raw)
local waiting = not state.st and not redis.call('ZSCORE', K.active, id)
if not waiting and state.st ~= 'delayed' then return { -4 } end
if #newData > cfg.maxPayloadBytes then return { -5, 1, cfg.maxPayloadBytes } end
if newData ~= '' then data = newData end

local B, record = newBatch(), nil
if delayMs > 0 then
  if waiting then detachWaiting(K, B, id, state) end
  state.st, state.ra = 'delayed', now + delayMs
  redis.call('ZADD', K.delayed, state.ra, id)
  batchTimer(B, state.ra)
elseif delayMs == 0 and not waiting then
  redis.call('ZREM', K.delayed, id)
  record = attachWaiting(K, B, id, state, data)
end
if not record then
  record = encodeJob(state, data)
  redis.call('HSET', K.jobs, id, record)
end
flushBatch(K, B)
return { 1, jobView(K, cfg, id, record) }
