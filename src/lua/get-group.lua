--[[ get-group: a group's state and its jobs in the order they will run.

KEYS[1] meta           hash  config
KEYS[2] jobs           hash  id -> job record
KEYS[3] ready          zset  idle group heads
KEYS[4] active         zset  leased job ids
KEYS[5] held           zset  held or parked groups
KEYS[6] paused-groups  set   paused group names
KEYS[7] the group zset

ARGV[1] group
ARGV[2] now (epoch ms)
ARGV[3] limit: at most this many jobs

Returns {1, state, {{id, state JSON, data, state, startedAt, expiresAt, maxAttempts}...}}
Errors  {-1} QUEUE_NOT_FOUND, {-6} GROUP_NOT_FOUND
]]
-- @include job
-- @include view

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], pausedGroups = KEYS[6],
  prefix = string.sub(KEYS[1], 1, -5),
}
local cfgJson = redis.call('HGET', KEYS[1], 'config')
if not cfgJson then return { -1 } end
local cfg = cjson.decode(cfgJson)
local state = groupState(K, cfg, ARGV[1], tonumber(ARGV[2]))
if not state then return { -6 } end
local jobs = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[7], 0, tonumber(ARGV[3]) - 1)) do
  local id = idOf(m)
  jobs[#jobs + 1] = jobView(K, cfg, id, redis.call('HGET', K.jobs, id))
end
return { 1, state, jobs }
