#!lua flags=allow-key-locking
--[[ heartbeat: extends a live lease (async deliveries keep their job this way), and on a batch
queue the leases of the other jobs of its batch still out (batch.lua). The new deadline usually
lies past the queue's timer; a shorter extension lowers it.

KEYS[1] meta    hash  config and counters (meta.lua)
KEYS[2] jobs    hash  id -> job record
KEYS[3] active  zset  lease members by lease deadline
KEYS[4] revoked zset  leases a cancel ended, '<id> <token>' (lease.lua)

ARGV[1] now (epoch ms)
ARGV[2] id
ARGV[3] lease token
ARGV[4] extendMs (0: the job's timeoutMs); the lease ends at now + extendMs, at most 24 h

Returns {1, expiresAt, dueAt}
Errors  {-11} JOB_CANCELLED (the job was cancelled under this lease),
        {-3} LEASE_LOST (also when the queue is gone: its leases went with it)
]]
-- @include errors
-- @include job
-- @include meta
-- @include lease
-- @include batch

local K = { jobs = KEYS[2], active = KEYS[3], revoked = KEYS[4] }
local now, id, token, extendMs = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])

local M = openMeta(KEYS[1])
if not M.cfg then return { LEASE_LOST } end
local cfg = M.cfg
local state, data, deadline, member = liveLease(K, M, id, token)
if not state then return { lostLease(K.revoked, id, token) } end

if not state.sa then
  -- First heartbeat of this lease: the deadline is still the one reserve set, so the start
  -- time can be recovered from it before it moves.
  state.sa = deadline - leaseMsOf(state, cfg)
  redis.call('HSET', K.jobs, id, encodeJob(state, data))
end
if extendMs <= 0 then extendMs = state.to or cfg.timeoutMs end
local expiresAt = now + math.min(extendMs, DAY_MS)
-- A batch is one lease (batch.lua): its jobs still out share this deadline, and all move.
local members = { expiresAt, member }
if Batch.config(M) and Batch.out(M, state.g) > 0 then
  for _, other in ipairs(redis.call('ZRANGEBYSCORE', K.active, deadline, deadline)) do
    if other ~= member and select(2, splitLease(other)) == state.g then
      members[#members + 1] = expiresAt
      members[#members + 1] = other
    end
  end
end
redis.call('ZADD', K.active, 'XX', unpack(members))
noteTimer(M, expiresAt)
saveMeta(M)
return { 1, expiresAt, dueReport(M, now) }
