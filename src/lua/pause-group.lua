#!lua flags=allow-key-locking
--[[ pause-group: stops or restarts dispatching one group (a poison group) without stopping
the queue. A paused idle group is parked in `held` with score +inf; a paused active or held
(retry backoff) group is parked when reserve next meets it, after its lease or hold ends, so a
pause never shortens a backoff. Resuming offers a parked group's head to `ready` again (also
a held one whose backoff has ended).

KEYS[1] meta           hash  config and counters (meta.lua)
KEYS[2] jobs           hash  id -> job record
KEYS[3] ready          zset  idle group heads
KEYS[4] active         zset  lease members
KEYS[5] held           zset  group -> release time (+inf: parked)
KEYS[6] paused-groups  set   paused group names
KEYS[7] prioritized    zset  idle group heads with a priority
KEYS[8] group          zset  the group's jobs

ARGV[1] group
ARGV[2] '1' pause | '0' resume
ARGV[3] now (epoch ms)

Returns {1, group state ('' = the group has no jobs), dueAt}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include view
-- @include partition

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], pausedGroups = KEYS[6],
  prioritized = KEYS[7],
}
local group, groupKey, now = ARGV[1], KEYS[8], tonumber(ARGV[3])
local M = openMeta(KEYS[1], { groupField(group) })
checkPartition(M, group)
if not M.cfg then return { QUEUE_NOT_FOUND } end
local B = newBatch(M, now)

if ARGV[2] == '1' then
  if redis.call('SADD', K.pausedGroups, group) == 1 then metaAdd(M, 'pausedGroups', 1) end
  if isFlow(M, group) then
    -- A flow group parks at once: its offered jobs step back, its leases run to their end.
    local F = flowOf(K, B, groupKey, group)
    pullOffered(K, B, groupKey, group, F)
    if type(F.h) == 'number' then F.ph = F.h end
    F.h = 'paused'
    if groupJobs(M, group) > 0 then redis.call('ZADD', K.held, '+inf', group) end
  else
    local head = redis.call('ZRANGE', groupKey, 0, 0, 'WITHSCORES')
    if head[1] and takeReady(K, B, groupKey, head[1], head[2]) then
      redis.call('ZADD', K.held, '+inf', group)
    end
  end
else
  if redis.call('SREM', K.pausedGroups, group) == 1 then metaAdd(M, 'pausedGroups', -1) end
  -- Parked (+inf), or a retry hold that ended while paused: offer the head again now.
  local hold = redis.call('ZSCORE', K.held, group)
  local F = isFlow(M, group) and flowOf(K, B, groupKey, group)
  if F and F.h == 'paused' then
    -- A flow group goes back to the hold its pause came during, if that has not ended.
    redis.call('ZREM', K.held, group)
    local resumeAt = F.ph
    F.h, F.ph = nil, nil
    if resumeAt and resumeAt > now then holdFlow(K, B, group, F, resumeAt) else refillGroup(K, B, groupKey, group, F) end
  elseif hold == 'inf' or (hold and tonumber(hold) <= now) then
    redis.call('ZREM', K.held, group)
    releaseGroup(K, B, groupKey, group)
  end
end
flushBatch(K, B)
saveMeta(M)
return { 1, groupState(K, M, groupKey, group, now) or '', dueReport(M, now) }
