--[[ list-jobs: one page of a queue's jobs in one state.
Order: waiting with a group, as they will run; waiting without a group, hash order (HSCAN);
delayed by runAt; active by lease deadline; completed and failed newest first.

KEYS[1] meta       hash  config
KEYS[2] jobs       hash  id -> job record
KEYS[3] active     zset  leased job ids by deadline
KEYS[4] delayed    zset  delayed job ids by runAt
KEYS[5] completed  zset  kept completed ids by finishedAt
KEYS[6] failed     zset  kept failed ids by finishedAt
KEYS[7] the group zset (only with a group)

ARGV[1] state: waiting | delayed | active | completed | failed
ARGV[2] limit (page size)
ARGV[3] cursor ('' = first page): an offset, or the HSCAN cursor for waiting without a group
ARGV[4] group filter for the other states ('' = all groups)

Returns {1, next cursor ('' = no more), {{id, state JSON, data, state, startedAt, expiresAt, maxAttempts}...}}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include job
-- @include view

local K = { jobs = KEYS[2], active = KEYS[3] }
local wanted, limit, cursor, group = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local cfgJson = redis.call('HGET', KEYS[1], 'config')
if not cfgJson then return { -1 } end
local cfg = cjson.decode(cfgJson)

local views, nextCursor = {}, ''
local function add(id)
  local raw = redis.call('HGET', K.jobs, id)
  if not raw then return end
  local view = jobView(K, cfg, id, raw)
  if view[4] == wanted and (group == '' or decodeJob(raw).g == group) then
    views[#views + 1] = view
  end
end

if wanted == 'waiting' and not KEYS[7] then
  local page = redis.call('HSCAN', K.jobs, cursor == '' and '0' or cursor, 'COUNT', limit)
  for i = 1, #page[2], 2 do add(page[2][i]) end
  if page[1] ~= '0' then nextCursor = page[1] end
else
  local offset = tonumber(cursor) or 0
  local source, reverse = ({ delayed = KEYS[4], active = KEYS[3], completed = KEYS[5],
    failed = KEYS[6], waiting = KEYS[7] })[wanted], wanted == 'completed' or wanted == 'failed'
  local members = redis.call(reverse and 'ZREVRANGE' or 'ZRANGE', source, offset, offset + limit - 1)
  for _, m in ipairs(members) do add(wanted == 'waiting' and idOf(m) or m) end
  if #members == limit then nextCursor = tostring(offset + limit) end
end
return { 1, nextCursor, views }
