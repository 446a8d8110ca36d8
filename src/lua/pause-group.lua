--[[ pause-group: stops or restarts dispatching one group (a poison group) without stopping
the queue. A paused idle group is parked in `held` with score +inf; a paused active or held
(retry backoff) group is parked when reserve next meets it, after its lease or hold ends, so a
pause never shortens a backoff. Resuming offers a parked group's head to `ready` again (also
a held one whose backoff has ended).

KEYS[1] meta           hash  config, pausedGroups count
KEYS[2] jobs           hash  id -> job record
KEYS[3] ready          zset  idle group heads (+ ~timers marker)
KEYS[4] active         zset  leased job ids
KEYS[5] held           zset  group -> release time (+inf: parked)
KEYS[6] paused-groups  set   paused group names
KEYS[7] the group zset

ARGV[1] group
ARGV[2] '1' pause | '0' resume
ARGV[3] now (epoch ms)

Returns {1, group state ('' = the group has no jobs)}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include job
-- @include group
-- @include view

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], pausedGroups = KEYS[6],
  prefix = string.sub(KEYS[1], 1, -5),
}
local group, groupKey, now = ARGV[1], KEYS[7], tonumber(ARGV[3])
local cfgJson = redis.call('HGET', KEYS[1], 'config')
if not cfgJson then return { -1 } end
local head = redis.call('ZRANGE', groupKey, 0, 0)[1]

if ARGV[2] == '1' then
  if redis.call('SADD', K.pausedGroups, group) == 1 then
    redis.call('HINCRBY', KEYS[1], 'pausedGroups', 1)
  end
  if head and redis.call('ZREM', K.ready, head) == 1 then
    redis.call('ZADD', K.held, '+inf', group)
  end
else
  if redis.call('SREM', K.pausedGroups, group) == 1 then
    redis.call('HINCRBY', KEYS[1], 'pausedGroups', -1)
  end
  -- Parked (+inf), or a retry hold that ended while paused: offer the head again now.
  local hold = redis.call('ZSCORE', K.held, group)
  if hold == 'inf' or (hold and tonumber(hold) <= now) then
    redis.call('ZREM', K.held, group)
    local B = newBatch()
    advanceGroup(B, groupKey)
    flushBatch(K, B)
  end
end
return { 1, groupState(K, cjson.decode(cfgJson), group, now) or '' }
