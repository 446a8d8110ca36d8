--[[ list-groups: one page of the groups that hold a waiting or active job, with their state.
Groups are found where the invariant keeps them: active (by their leased job), ready (by their
head), held. The cursor is '<phase>:<offset>' over those three in that order.

KEYS[1] meta           hash  config
KEYS[2] jobs           hash  id -> job record
KEYS[3] ready          zset  idle group heads (+ ~timers marker)
KEYS[4] active         zset  leased job ids
KEYS[5] held           zset  held or parked groups
KEYS[6] paused-groups  set   paused group names

ARGV[1] now (epoch ms)
ARGV[2] limit (page size)
ARGV[3] cursor ('' = first page)

Returns {1, next cursor ('' = no more), {{group, waiting, active, state}...}}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include job
-- @include view

local K = {
  jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], pausedGroups = KEYS[6],
  prefix = string.sub(KEYS[1], 1, -5),
}
local now, limit, cursor = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local cfgJson = redis.call('HGET', KEYS[1], 'config')
if not cfgJson then return { -1 } end
local cfg = cjson.decode(cfgJson)

local function groupOfJob(id)
  local raw = redis.call('HGET', K.jobs, id)
  return raw and decodeJob(raw).g
end
local phases = {
  { 'a', K.active, groupOfJob },
  { 'r', K.ready, function(m) return m ~= TIMERS and groupOfJob(idOf(m)) end },
  { 'h', K.held, function(g) return g end },
}
local phase, offset = string.match(cursor, '^(%a):(%d+)$')
phase, offset = phase or 'a', tonumber(offset) or 0

local groups, started = {}, false
for _, p in ipairs(phases) do
  if p[1] == phase then started = true end
  if started then
    while #groups < limit do
      local members = redis.call('ZRANGE', p[2], offset, offset + limit - #groups - 1)
      if #members == 0 then break end
      offset = offset + #members
      for _, m in ipairs(members) do
        local group = p[3](m)
        local state = group and groupState(K, cfg, group, now)
        if state then
          local active = p[1] == 'a' and 1 or 0
          local size = redis.call('ZCARD', groupKeyOf(K.prefix, group))
          groups[#groups + 1] = { group, size - active, active, state }
        end
      end
    end
    if #groups >= limit then return { 1, p[1] .. ':' .. offset, groups } end
    offset = 0
  end
end
return { 1, '', groups }
